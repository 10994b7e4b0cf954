/**
 * Memory check (bench only, not a unit test): parses a generated file (Nessus, 500 MB by
 * default; `--format` for another, e.g. the JSON formats) in a fresh process and fails when its
 * peak RSS exceeds a fixed bound. The bound holds
 * for any file size because nothing in the parser grows with the file.
 *
 * Two modes, each with a 1 KB Nessus file measured the same way in the same run (the fixed cost:
 * Node, tsx, the parser modules, and with `--pool` the pool and its thread):
 * - default: parseScan in the process's main thread;
 * - `--pool`: through the Piscina parser pool (`src/workers/parser-pool.ts`) with one thread, as
 *   the ingest worker runs it. Worker threads live in the same process, so its peak RSS counts
 *   the main thread, the parser thread and the structured-clone traffic between them.
 *
 *   npx tsx bench/parsers/memory-check.ts                       # 500 MB, in process, bound 300 MB
 *   npx tsx bench/parsers/memory-check.ts --pool                # 500 MB, through the pool, bound 200 MB
 *   npx tsx bench/parsers/memory-check.ts --size 1GB --bound 200
 *   npx tsx bench/parsers/memory-check.ts --pool --size 1GB --bound 250 --format sarif   # or cyclonedx-json, cli
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DATA_DIR, FORMATS, generate, parseSize, type BenchFormat } from './generate.js';
import { measure } from './bench.js';
import { FIXTURES } from './layouts.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '500MB' },
    bound: { type: 'string' },
    pool: { type: 'boolean', default: false },
    format: { type: 'string', default: 'nessus' },
  },
});
const format = values.format as BenchFormat;
if (!FORMATS[format]) throw new Error(`unknown --format ${format}`);
// 200 MB is the bound; the in-process mode keeps the margin it was introduced with.
const bound = Number(values.bound ?? (values.pool ? 200 : 300));
const mode = values.pool ? ['--mode', 'pool', '--tasks', '1'] : ['--mode', 'stream'];

/**
 * A 1 KB Nessus v2 report: the fixture's first ReportItem on one host, without the fixture's
 * 430 KB policy (the generator cannot go below the fixture's head).
 */
function tinyNessus(): string {
  const path = `${DATA_DIR}nessus-1kb.xml`;
  if (existsSync(path)) return path;
  const fixture = `${FIXTURES}nessus/nessus_v_unknown.xml`;
  const items = readFileSync(fixture, 'utf8').match(/<ReportItem [\s\S]*?<\/ReportItem>/g) ?? [];
  const item = items.find((i) => Buffer.byteLength(i) < 800);
  if (!item) throw new Error('no small ReportItem in the fixture');
  writeFileSync(
    path,
    `<?xml version="1.0" ?>\n<NessusClientData_v2>\n<Report name="bench">\n<ReportHost name="host0.bench.example">` +
      `<HostProperties><tag name="host-ip">10.0.0.0</tag></HostProperties>\n${item}\n</ReportHost>\n</Report>\n</NessusClientData_v2>\n`,
  );
  return path;
}

const tiny = measure([...mode, '--format', 'nessus', '--file', tinyNessus()]);
const file = await generate(format, parseSize(values.size!), values.size!.toLowerCase());
const m = measure([...mode, '--format', format, '--file', file]);
if (!m || !tiny) {
  console.error('memory check: a parse failed');
  process.exit(1);
}
const how = values.pool ? 'through the parser pool (1 thread)' : 'in process';
console.log(`memory check, ${how}:`);
console.log(`  1 KB Nessus (baseline): ${tiny.count} findings, peak RSS ${tiny.peakRssMb} MB`);
console.log(
  `  ${values.size} ${format}: ${m.count} findings in ${m.seconds}s (${m.mbPerSec} MB/s), peak RSS ${m.peakRssMb} MB ` +
    `(+${m.peakRssMb - tiny.peakRssMb} MB over the baseline), bound ${bound} MB`,
);
if (m.peakRssMb > bound) {
  console.error(`memory check FAILED: peak RSS ${m.peakRssMb} MB is over the ${bound} MB bound`);
  process.exit(1);
}
console.log('memory check passed');
