/**
 * The database half of scan ingestion, without HTTP or the queue: a Nessus file is parsed once
 * into memory, then stored through the real scan writer and `completeScan` twice (a first scan
 * whose findings are all new cases, then the same findings again, all existing cases), on a
 * fresh, migrated database. Reports wall time and the PostgreSQL backends' CPU (from /proc) per
 * step, so schema and SQL changes can be compared within one run. As on a server's first start,
 * the shipped CISA KEV snapshot is loaded first (the due dates read it), and each completion gets
 * the parser's scope (so rescan resolution runs, as for an upload).
 *
 *   npx tsx bench/ingest/write-bench.ts [--size 100MB] [--format nessus] [--extra-sql "ALTER ..."] [--rounds 2] [--stats] [--workflow]
 *
 * `--workflow`: the workspace has an enabled webhook workflow whose rule matches every case, and
 * each completion is followed by the workflow trigger (`scanCompleted`, with a queue that takes the
 * deliveries and does nothing), in the same timed step: the cost of recording a scan's deliveries.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { BenchFormat } from '../parsers/generate.js';
import { openBenchStore, parseGenerated, parsingScan, writeFindings } from './scan-setup.js';
import { completeScan } from '../../src/domain/scans/ingest-store.js';
import { createWorkflowTrigger } from '../../src/domain/workflows/trigger.js';
import { insertWorkflow } from '../../src/domain/workflows/workflow-store.js';
import { SHIPPED_KEV_SNAPSHOT } from '../../src/app/day-one-enrichment.js';
import { loadKevSnapshotIfEmpty } from '../../src/domain/enrichment/snapshot.js';

const args = process.argv.slice(2);
const opt = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const size = opt('size', '100MB');
const extraSql = opt('extra-sql', '');
const rounds = Number(opt('rounds', '2'));
const format = opt('format', 'nessus') as BenchFormat;
const withWorkflow = args.includes('--workflow');

const { batches, parsed } = await parseGenerated(format, size);
const total = batches.reduce((n, b) => n + b.length, 0);

const store = await openBenchStore('bench_write');
const { pool, workspaceId } = store;
await loadKevSnapshotIfEmpty(pool, SHIPPED_KEV_SNAPSHOT);
if (extraSql) await pool.query(extraSql);
if (withWorkflow)
  await insertWorkflow(pool, {
    id: randomUUID(),
    workspaceId,
    name: 'bench',
    kind: 'webhook',
    enabled: true,
    target: { kind: 'webhook', url: 'https://hooks.example.test/bench' },
    credentialSealed: null,
    credentialHint: null,
    secretSealed: 'unused',
    rule: {},
    fields: {},
    statusMap: {},
  });
const trigger = createWorkflowTrigger({ pool, enqueue: async () => {} });

/** CPU ticks (user + system) of every backend of this database. */
async function backendTicks(): Promise<number> {
  const { rows } = await pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`,
  );
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // not visible (another host): wall time only
    }
  }
  return ticks;
}
const HZ = 100;

async function step<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const c0 = await backendTicks();
  const cpu0 = process.cpuUsage();
  const r = await fn();
  const cpu = process.cpuUsage(cpu0);
  const pgCpu = ((await backendTicks()) - c0) / HZ;
  console.log(
    `| ${label} | ${((performance.now() - t0) / 1000).toFixed(2)} s | ${pgCpu.toFixed(2)} s | ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s |`,
  );
  return r;
}

console.log(`findings: ${total}; extra SQL: ${extraSql || '(none)'}`);
console.log('| step | wall | PostgreSQL CPU | Node CPU |');
console.log('|---|---|---|---|');
for (let round = 1; round <= rounds; round++) {
  const id = await parsingScan(pool, workspaceId, 'nessus');
  await step(`scan ${round}: write findings + evidence`, () =>
    writeFindings(pool, { id, workspaceId }, batches),
  );
  await step(
    `scan ${round}: completeScan${withWorkflow ? ' + trigger' : ''} (${round === 1 ? 'new' : 'existing'} cases)`,
    async () => {
      await completeScan(pool, id, { bytes: 1, notes: [], scope: parsed.scope });
      if (withWorkflow) await trigger.scanCompleted(workspaceId, id);
    },
  );
}
if (args.includes('--stats')) {
  const st = await pool.query(
    `SELECT avg(length(raw_excerpt))::int AS raw, avg(length(scanner_output))::int AS out,
            avg(pg_column_size(raw_excerpt))::int AS raw_stored, avg(pg_column_size(scanner_output))::int AS out_stored,
            avg(length(description))::int AS descr, avg(pg_column_size(findings.*))::int AS frow,
            (SELECT avg(pg_column_size(c.*))::int FROM cases c) AS crow
     FROM findings`,
  );
  console.log(st.rows[0]);
  const ix = await pool.query(
    `SELECT indexrelid::regclass AS ix, pg_size_pretty(pg_relation_size(indexrelid)) AS size FROM pg_index
     WHERE indrelid::regclass::text IN ('findings', 'cases') ORDER BY 1`,
  );
  console.log(ix.rows.map((r: { ix: string; size: string }) => `${r.ix} ${r.size}`).join('; '));
}
const { rows } = await pool.query<{ t: string; size: string }>(
  `SELECT relname AS t, pg_size_pretty(pg_total_relation_size(oid)) AS size FROM pg_class
   WHERE relname IN ('findings', 'cases') ORDER BY relname`,
);
console.log(rows.map((r) => `${r.t} ${r.size}`).join('; '));
await store.close();
