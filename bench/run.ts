/**
 * `npm run bench`: every benchmark in turn, short settings. Each prints its own table;
 * bench/README.md holds the figures and how to read them.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const benches: { name: string; file: string; args: string[] }[] = [
  { name: 'auth overhead (Redis)', file: 'bench/auth/auth-overhead.ts', args: ['--seconds', '3', '--redis'] },
  { name: 'auth overhead (PostgreSQL)', file: 'bench/auth/auth-overhead.ts', args: ['--seconds', '3'] },
  { name: 'triage routing overhead', file: 'bench/triage/route-overhead.ts', args: ['200'] },
  { name: 'batch triage throughput', file: 'bench/triage/batch-throughput.ts', args: ['--items', '1000'] },
  { name: 'EPSS load', file: 'bench/enrichment/epss-load.ts', args: ['--runs', '1'] },
  {
    name: 'scan ingest end to end (100 MB Nessus)',
    file: 'bench/ingest/ingest-bench.ts',
    args: ['--size', '100MB', '--redis'],
  },
  {
    name: 'scan ingest as deployed (100 MB Nessus, own process)',
    file: 'bench/ingest/upload-process.ts',
    args: ['--size', '100MB'],
  },
  {
    name: 'triage over HTTP at fixed rates',
    file: 'bench/triage/http-overhead.ts',
    args: ['--seconds', '5'],
  },
  { name: 'scan parsers (100 MB, every format)', file: 'bench/parsers/bench.ts', args: [] },
  { name: 'parser memory bound (500 MB Nessus)', file: 'bench/parsers/memory-check.ts', args: [] },
  {
    name: 'parser memory bound through the parser pool (500 MB Nessus)',
    file: 'bench/parsers/memory-check.ts',
    args: ['--pool'],
  },
];

let failed = 0;
for (const b of benches) {
  if (!existsSync(b.file)) continue;
  console.log(`\n### ${b.name}: npx tsx ${b.file} ${b.args.join(' ')}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', b.file, ...b.args], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
