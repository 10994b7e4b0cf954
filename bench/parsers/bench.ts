/**
 * Parser throughput bench. For each of Nessus, Qualys (asset data report, with the glossary
 * join) and OpenVAS it generates a file (100 MB by default) and measures, each in a fresh
 * process so peak RSS is its own:
 *   - stream/saxes: parseScan on one thread with full extraction (the production path)
 *   - stream/sax:   the same with the sax tokenizer (the engine comparison)
 *   - pool x1:      one file through the Piscina pool (worker parse + batches cloned to main)
 *   - pool x2:      two files at once on two worker threads (aggregate MB/s)
 *   - split x2:     one file cut at record boundaries, two threads, findings in file order
 *   - dom:          fast-xml-parser parsing the whole file into memory (baseline), same run
 *
 *   npx tsx bench/parsers/bench.ts                  # 100 MB files
 *   npx tsx bench/parsers/bench.ts --size 1GB       # 1 GB files (slow; dom may run out of memory)
 *   npx tsx bench/parsers/bench.ts --format nessus
 */
import { execFileSync } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DATA_DIR, TEMPLATES, generate, parseSize } from './generate.js';

interface Measurement {
  mode: string;
  engine: string;
  tasks: number;
  count: number;
  seconds: number;
  mbPerSec: number;
  cpuSeconds: number;
  mbPerCpuSec: number;
  peakRssMb: number;
}

const RUN_ONE = fileURLToPath(new URL('./run-one.ts', import.meta.url));

/** Runs one measurement in a child process; returns null when it fails (e.g. DOM out of memory). */
export function measure(args: string[]): Measurement | null {
  try {
    const out = execFileSync(process.execPath, ['--import', 'tsx', RUN_ONE, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return JSON.parse(out.trim().split('\n').pop()!) as Measurement;
  } catch (err) {
    console.error(`measurement failed: ${args.join(' ')}: ${(err as Error).message.split('\n')[0]}`);
    return null;
  }
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const { values } = parseArgs({
    options: { size: { type: 'string', default: '100MB' }, format: { type: 'string', default: 'all' } },
  });
  const formats =
    values.format === 'all'
      ? (Object.keys(TEMPLATES) as (keyof typeof TEMPLATES)[])
      : [values.format as keyof typeof TEMPLATES];
  const rows: Record<string, unknown>[] = [];
  for (const format of formats) {
    const file = await generate(format, parseSize(values.size!), values.size!.toLowerCase());
    const mib = statSync(file).size / 1024 ** 2;
    const runs: [string, string[]][] = [
      ['stream/saxes', ['--mode', 'stream', '--engine', 'saxes']],
      ['stream/sax', ['--mode', 'stream', '--engine', 'sax']],
      ['pool x1', ['--mode', 'pool', '--tasks', '1']],
      ['pool x2', ['--mode', 'pool', '--tasks', '2']],
      ['split x2', ['--mode', 'split', '--tasks', '2']],
      ['dom (fast-xml-parser)', ['--mode', 'dom']],
    ];
    const results = new Map<string, Measurement | null>();
    for (const [name, args] of runs) results.set(name, measure([...args, '--file', file]));
    const dom = results.get('dom (fast-xml-parser)');
    for (const [name, m] of results) {
      const row = {
        format,
        fileMiB: Math.round(mib),
        run: name,
        findings: m?.count ?? null,
        seconds: m?.seconds ?? null,
        mbPerSec: m?.mbPerSec ?? null,
        cpuSeconds: m?.cpuSeconds ?? null,
        mbPerCpuSec: m?.mbPerCpuSec ?? null,
        peakRssMb: m?.peakRssMb ?? null,
        wallVsDom: m && dom ? Number((m.mbPerSec / dom.mbPerSec).toFixed(2)) : null,
        cpuVsDom: m && dom ? Number((m.mbPerCpuSec / dom.mbPerCpuSec).toFixed(2)) : null,
      };
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  }
  console.table(rows);
  writeFileSync(`${DATA_DIR}parsers-bench-${values.size!.toLowerCase()}.json`, JSON.stringify(rows, null, 2));
}
