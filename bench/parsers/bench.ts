/**
 * Parser throughput bench. For each format (`formats.ts`: Nessus, Qualys asset report with the
 * glossary join, OpenVAS, SARIF, CycloneDX JSON and XML, CLI JSON Lines) it generates a file
 * (100 MB by default) and measures, each in a fresh process so peak RSS is its own:
 *   - stream:       parseScan on one thread with full extraction (the production path; saxes for XML)
 *   - stream/sax:   the same with the sax tokenizer (XML only: the engine comparison)
 *   - tokens:       the tokenizer alone, no handlers (the floor of the streaming path; XML only)
 *   - pool x1:      one file through the Piscina pool (worker parse + batches cloned to main)
 *   - pool x2:      two files at once on two worker threads (aggregate MB/s)
 *   - split x2:     one file cut at record boundaries, two threads, findings in file order (where
 *                   boundaries can be found without parsing from the start: see README)
 *   - baseline:     the whole-document parse in the same run (`baselines.ts`): fast-xml-parser for
 *                   XML, JSON.parse of the whole file for SARIF and CycloneDX JSON, JSON.parse per
 *                   line for JSON Lines
 *
 *   npx tsx bench/parsers/bench.ts                                  # 100 MB files, every format
 *   npx tsx bench/parsers/bench.ts --format sarif,cyclonedx-json,cyclonedx-xml,cli
 *   npx tsx bench/parsers/bench.ts --size 1GB --format nessus       # slow; the DOM may run out of memory
 */
import { execFileSync } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DATA_DIR, FORMATS, generate, parseFormats, parseSize, type BenchFormat } from './generate.js';

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

const BASELINE_NAME = {
  'xml-dom': 'dom (fast-xml-parser)',
  'json-parse': 'whole JSON.parse',
  'json-lines': 'JSON.parse per line',
} as const;

/** The runs of one format, baseline last; the baseline is the row every ratio divides by. */
export function runsFor(format: BenchFormat): [name: string, args: string[]][] {
  const spec = FORMATS[format];
  const xml = spec.ext === 'xml';
  return [
    [xml ? 'stream/saxes' : 'stream', ['--mode', 'stream', '--engine', 'saxes']],
    ...(xml ? [['stream/sax', ['--mode', 'stream', '--engine', 'sax']] as [string, string[]]] : []),
    // The JSON parsers no longer run on stream-json's tokenizer (record scanner + JSON.parse), so
    // its floor is measured for XML only; `run-one.ts --mode tokens` still runs it for JSON.
    ...(xml ? [['tokens only', ['--mode', 'tokens']] as [string, string[]]] : []),
    ['pool x1', ['--mode', 'pool', '--tasks', '1']],
    ['pool x2 (2 files)', ['--mode', 'pool', '--tasks', '2']],
    ...(spec.splittable
      ? [['split x2 (1 file)', ['--mode', 'split', '--tasks', '2']] as [string, string[]]]
      : []),
    [BASELINE_NAME[spec.baseline], ['--mode', 'dom']],
  ];
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const { values } = parseArgs({
    options: { size: { type: 'string', default: '100MB' }, format: { type: 'string', default: 'all' } },
  });
  const rows: Record<string, unknown>[] = [];
  for (const format of parseFormats(values.format!)) {
    const file = await generate(format, parseSize(values.size!), values.size!.toLowerCase());
    const mib = statSync(file).size / 1024 ** 2;
    const runs = runsFor(format);
    const results = new Map<string, Measurement | null>();
    for (const [name, args] of runs)
      results.set(name, measure([...args, '--format', format, '--file', file]));
    const base = results.get(runs[runs.length - 1]![0]);
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
        wallVsBase: m && base ? Number((m.mbPerSec / base.mbPerSec).toFixed(2)) : null,
        cpuVsBase: m && base ? Number((m.mbPerCpuSec / base.mbPerCpuSec).toFixed(2)) : null,
      };
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  }
  console.table(rows);
  const label = `${values.size!.toLowerCase()}-${values.format!.replaceAll(',', '+')}`;
  writeFileSync(`${DATA_DIR}parsers-bench-${label}.json`, JSON.stringify(rows, null, 2));
}
