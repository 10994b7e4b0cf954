/**
 * One measurement in a fresh process, so peak RSS belongs to that measurement alone. Prints a
 * JSON line. Used by bench.ts and memory-check.ts; by hand, to profile one mode.
 *
 *   npx tsx bench/parsers/run-one.ts --mode stream|pool|split|dom|tokens --file F
 *     [--format nessus|...|cli (default: from the file name)] [--engine saxes|sax] [--tasks 2]
 *
 * Modes: `stream` parseScan in this thread with full extraction; `pool` `--tasks` files at once
 * through the Piscina pool; `split` one file cut over `--tasks` threads; `dom` the whole-document
 * baseline and `tokens` the tokenizer floor (`baselines.ts`).
 */
import { basename } from 'node:path';
import { createReadStream, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseScan, type XmlEngineName } from '../../src/parsers/index.js';
import { createParserPool, parseFileInPool } from '../../src/workers/parser-pool.js';
import { tokenizerOnly, wholeDocument } from './baselines.js';
import { BENCH_FORMATS, FORMATS, type BenchFormat } from './formats.js';
import { parseFileSplitInPool } from './split-parse.js';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'stream' },
    file: { type: 'string' },
    engine: { type: 'string', default: 'saxes' },
    tasks: { type: 'string', default: '1' },
    format: { type: 'string' },
  },
});
const file = values.file!;
const size = statSync(file).size;
const format = (values.format ??
  [...BENCH_FORMATS].sort((a, b) => b.length - a.length).find((f) => basename(file).startsWith(`${f}-`))) as
  BenchFormat | undefined;
if (!format || !FORMATS[format]) throw new Error(`pass --format (one of ${BENCH_FORMATS.join(', ')})`);

async function streamOnce(): Promise<number> {
  let count = 0;
  let withCve = 0;
  for await (const batch of parseScan(createReadStream(file, { highWaterMark: 256 * 1024 }), {
    xmlEngine: values.engine as XmlEngineName,
  })) {
    count += batch.length;
    for (const f of batch) if (f.cveIds.length > 0) withCve++;
  }
  return count + withCve * 0;
}

/** One file cut at record boundaries and parsed on `threads` threads, findings in file order. */
async function splitRun(threads: number): Promise<number> {
  const pool = createParserPool({ maxThreads: threads, minThreads: threads });
  try {
    let n = 0;
    await parseFileSplitInPool(pool, { path: file, threads }, async (batch) => {
      for (const f of batch) if (f.recordIndex !== n++) throw new Error(`out of order at ${n - 1}`);
    });
    return n;
  } finally {
    await pool.destroy();
  }
}

async function poolRun(tasks: number): Promise<number> {
  const pool = createParserPool({ maxThreads: tasks, minThreads: tasks });
  try {
    const counts = await Promise.all(
      Array.from({ length: tasks }, async () => {
        let n = 0;
        await parseFileInPool(pool, { path: file }, async (batch) => {
          n += batch.length;
        });
        return n;
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  } finally {
    await pool.destroy();
  }
}

const started = performance.now();
const cpuStart = process.cpuUsage();
const tasks = Number(values.tasks);
const count =
  values.mode === 'dom'
    ? await wholeDocument(format, file)
    : values.mode === 'tokens'
      ? await tokenizerOnly(format, file)
      : values.mode === 'pool'
        ? await poolRun(tasks)
        : values.mode === 'split'
          ? await splitRun(tasks)
          : await streamOnce();
const seconds = (performance.now() - started) / 1000;
// CPU time (all threads of the process) is reported next to wall time because wall time is
// unreliable on a shared, loaded machine.
const cpu = process.cpuUsage(cpuStart);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
const bytes = values.mode === 'pool' ? size * tasks : size;
console.log(
  JSON.stringify({
    mode: values.mode,
    format,
    engine: FORMATS[format].ext === 'xml' ? values.engine : null,
    tasks,
    count,
    seconds: Number(seconds.toFixed(2)),
    mbPerSec: Number((bytes / 1024 ** 2 / seconds).toFixed(1)),
    cpuSeconds: Number(cpuSeconds.toFixed(2)),
    mbPerCpuSec: Number((bytes / 1024 ** 2 / cpuSeconds).toFixed(1)),
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
);
