/**
 * One measurement in a fresh process, so peak RSS belongs to that measurement alone. Prints a
 * JSON line. Used by bench.ts and memory-check.ts; not meant to be run by hand.
 *
 *   npx tsx bench/parsers/run-one.ts --mode stream|pool|split|dom --file F [--engine saxes|sax] [--tasks 2]
 */
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { XMLParser } from 'fast-xml-parser';
import { parseScan, type XmlEngineName } from '../../src/parsers/index.js';
import { createParserPool, parseFileInPool } from '../../src/workers/parser-pool.js';
import { parseFileSplitInPool } from './split-parse.js';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'stream' },
    file: { type: 'string' },
    engine: { type: 'string', default: 'saxes' },
    tasks: { type: 'string', default: '1' },
  },
});
const file = values.file!;
const size = statSync(file).size;

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

/** Counts elements named `name` anywhere in a fast-xml-parser result. */
function countDeep(node: unknown, name: string): number {
  if (Array.isArray(node)) return node.reduce((s: number, n) => s + countDeep(n, name), 0);
  if (typeof node !== 'object' || node === null) return 0;
  let n = 0;
  for (const [k, v] of Object.entries(node)) {
    if (k === name) n += Array.isArray(v) ? v.length : 1;
    n += countDeep(v, name);
  }
  return n;
}

function domOnce(): number {
  const text = readFileSync(file, 'utf8');
  const doc = new XMLParser({ ignoreAttributes: false, processEntities: false }).parse(text) as unknown;
  const record = file.includes('nessus') ? 'ReportItem' : file.includes('qualys') ? 'VULN_INFO' : 'result';
  return countDeep(doc, record);
}

const started = performance.now();
const cpuStart = process.cpuUsage();
const tasks = Number(values.tasks);
const count =
  values.mode === 'dom'
    ? domOnce()
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
    engine: values.engine,
    tasks,
    count,
    seconds: Number(seconds.toFixed(2)),
    mbPerSec: Number((bytes / 1024 ** 2 / seconds).toFixed(1)),
    cpuSeconds: Number(cpuSeconds.toFixed(2)),
    mbPerCpuSec: Number((bytes / 1024 ** 2 / cpuSeconds).toFixed(1)),
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
);
