/**
 * The duplicate marking alone (`markScanDuplicates`, docs/cases.md#one-vulnerability-one-case), two
 * checkouts alternated on one database: a generated scan is written and completed `--rounds` times
 * (the last completion's cases are then the ones "seen again"), `cases` is analyzed, and each side
 * marks the last scan in a transaction that is rolled back, with jit off as `completeScan` runs it.
 * Prints the backend's CPU per marking and a digest of every case's `duplicate_of` after it, which
 * must be equal on both sides. `--other-scanner`: from the second round on, the findings are
 * another scanner's (new cases with the first round's keys), so every one with a key is marked.
 *
 *   git archive <before> src | tar -x -C /tmp/mark-before && ln -s "$PWD/node_modules" /tmp/mark-before/node_modules
 *   npx tsx bench/ingest/mark-duplicates.ts --before /tmp/mark-before [--format qualys-scan] [--rounds 2] [--pairs 4] [--other-scanner]
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { BenchFormat } from '../parsers/generate.js';
import { openBenchStore, parseGenerated, parsingScan, writeFindings } from './scan-setup.js';
import { completeScan } from '../../src/domain/scans/ingest-store.js';
import * as current from '../../src/domain/cases/case-duplicates.js';

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    format: { type: 'string', default: 'qualys-scan' },
    size: { type: 'string', default: '30MB' },
    rounds: { type: 'string', default: '2' },
    pairs: { type: 'string', default: '4' },
    'other-scanner': { type: 'boolean', default: false },
  },
});
if (!values.before) throw new Error('pass --before DIR');
const before = (await import(
  resolve(values.before, 'src/domain/cases/case-duplicates.ts')
)) as typeof current;
const format = values.format as BenchFormat;

const { batches, parsed } = await parseGenerated(format, values.size!);

const store = await openBenchStore('bench_mark');
const { pool, workspaceId } = store;
let scanId = '';
for (let r = 0; r < Number(values.rounds); r++) {
  scanId = await parsingScan(pool, workspaceId, 'nessus');
  await writeFindings(
    pool,
    { id: scanId, workspaceId },
    r > 0 && values['other-scanner']
      ? batches.map((b) =>
          b.map((f) => ({ ...f, scanner: 'bench-other', fingerprint: `${f.fingerprint.slice(0, -1)}x` })),
        )
      : batches,
  );
  // Another scanner's round names no scope: it would resolve the first round's cases as a rescan.
  const other = r > 0 && values['other-scanner'];
  await completeScan(pool, scanId, { bytes: 1, notes: [], scope: other ? undefined : parsed.scope });
}
// The last completion already marked its duplicates: undo that, so each side marks them again
// (with --other-scanner the earlier rounds mark nothing: one scanner, one rule per key).
await pool.query(`UPDATE cases SET duplicate_of = NULL WHERE workspace_id = $1`, [workspaceId]);
await pool.query('ANALYZE cases');

const client = await pool.connect();
await client.query('SET jit = off');
const { rows: backend } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
const ticks = (): number => {
  const f = readFileSync(`/proc/${backend[0]!.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(f[11]) + Number(f[12]);
};

async function once(mod: typeof current): Promise<{ marked: number; cpu: number; digest: string }> {
  await client.query('BEGIN');
  try {
    const t0 = ticks();
    const marked = await mod.markScanDuplicates(client, scanId, workspaceId);
    const cpu = (ticks() - t0) / 100;
    const { rows } = await client.query<{ digest: string }>(
      `SELECT md5(string_agg(id::text || '>' || coalesce(duplicate_of::text, '-'), ',' ORDER BY id)) AS digest
       FROM cases WHERE workspace_id = $1`,
      [workspaceId],
    );
    return { marked, cpu, digest: rows[0]!.digest };
  } finally {
    await client.query('ROLLBACK');
  }
}

const load = loadavg()[0]!;
const out = { before: [] as number[], after: [] as number[] };
const digests = new Set<string>();
let marked = 0;
for (let i = 0; i < Number(values.pairs); i++) {
  const order = i % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
  for (const side of order) {
    const r = await once(side === 'before' ? before : current);
    out[side].push(r.cpu);
    digests.add(r.digest);
    marked = r.marked;
  }
}
client.release();
await store.close();
if (digests.size !== 1) throw new Error('the two sides marked different cases');
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
console.log(
  JSON.stringify({
    format,
    rounds: Number(values.rounds),
    marked,
    'before PostgreSQL CPU s': out.before,
    'after PostgreSQL CPU s': out.after,
    'median before': median(out.before),
    'median after': median(out.after),
    'load (1 min) start → end': `${load.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`,
  }),
);
