/**
 * A rescan's completion at scale (docs/ingestion.md#rescans): one workspace of `--cases` Nessus
 * cases (default 1,000,000) on hosts of 100 cases each; the rescan covers `--scope` of them
 * (default 100,000: 1,000 hosts) and sees all but `--gone` (default 10%) again. Timed in process
 * against PostgreSQL: `completeScan` of that scan with resolution (the default) against the same
 * scan with `resolveMissing=false`, alternated in the same run, each from the same starting state
 * (the scope's cases open, last sighted by the seed scan; vacuumed before every run, untimed).
 *
 *   npx tsx bench/cases/rescan.ts [--cases 1000000] [--scope 100000] [--gone 0.1] [--runs 3]
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { migratedBenchDatabase } from '../lib/migrated-db.js';
import { completeScan } from '../../src/domain/scans/ingest-store.js';
import { withTransaction } from '../../src/db/pool.js';
import { lockScanScope, resolveUnseenCases } from '../../src/domain/cases/case-resolution.js';
import { upsertScanCases } from '../../src/domain/cases/case-upsert.js';
import { recordScanDeliveries } from '../../src/domain/workflows/trigger.js';
import type { ScanScope } from '../../src/parsers/index.js';

const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1]! : d);
const N = Number(opt('cases', '1000000'));
const SCOPE = Number(opt('scope', '100000'));
const GONE = Number(opt('gone', '0.1'));
const RUNS = Number(opt('runs', '3'));
/** Also time the completion's steps (lock, upsert, resolution, deliveries) in one rolled-back run. */
const STEPS = args.includes('--steps');
const PER_HOST = 100;
const HOSTS = Math.ceil(N / PER_HOST);
const SCOPE_HOSTS = Math.ceil(SCOPE / PER_HOST);
const SEEN_PER_HOST = Math.round(PER_HOST * (1 - GONE));

const ip = (h: number) => `10.${(h >> 16) & 255}.${(h >> 8) & 255}.${h & 255}`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const bench = await migratedBenchDatabase('bench_rescan', 4);
const { pool, workspaceId: ws } = bench;
try {
  const newScan = async (status: string, resolveMissing = true): Promise<string> => {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO scans (id, workspace_id, format, status, bytes, sha256, storage_path, resolve_missing)
       VALUES ($1, $2, 'nessus', $3, 1, 'x', 'bench', $4)`,
      [id, ws, status, resolveMissing],
    );
    return id;
  };
  const seedScan = await newScan('completed');
  const template = await newScan('completed');
  const seed = performance.now();
  // Host h's case j: fingerprint 'fp-h-j'; its scope as the upsert writes it (case-scope.ts).
  await pool.query(
    `INSERT INTO cases (workspace_id, fingerprint, title, severity, scanner, rule_id, host, ip, first_scan_id,
                        last_scan_id, first_seen, last_seen, sightings, scope)
     SELECT $1, 'fp-' || h || '-' || j, 'plugin ' || j, (ARRAY['CRITICAL','HIGH','MEDIUM','LOW','INFO'])[1 + j % 5],
            'Nessus', j::text, 'h' || h, ip, $2, $2, now(), now(), 1,
            json_build_array('nessus', 'ip:' || ip)::text
     FROM generate_series(0, $3::int - 1) h,
          LATERAL (SELECT '10.' || ((h >> 16) & 255) || '.' || ((h >> 8) & 255) || '.' || (h & 255) AS ip) a,
          generate_series(0, ${PER_HOST - 1}) j`,
    [ws, seedScan, HOSTS],
  );
  // The rescan's findings: the scope's hosts, all but the last GONE of each host's cases.
  await pool.query(
    `INSERT INTO findings (scan_id, record_index, workspace_id, fingerprint, scanner, rule_id, title, severity, host, ip)
     SELECT $1, (h * ${SEEN_PER_HOST} + j)::int, $2, 'fp-' || h || '-' || j, 'Nessus', j::text, 'plugin ' || j,
            (ARRAY['CRITICAL','HIGH','MEDIUM','LOW','INFO'])[1 + j % 5], 'h' || h,
            '10.' || ((h >> 16) & 255) || '.' || ((h >> 8) & 255) || '.' || (h & 255)
     FROM generate_series(0, $3::int - 1) h, generate_series(0, ${SEEN_PER_HOST - 1}) j`,
    [template, ws, SCOPE_HOSTS],
  );
  await pool.query('VACUUM ANALYZE');
  console.log(
    `${N.toLocaleString('en-US')} cases on ${HOSTS.toLocaleString('en-US')} hosts seeded in ${((performance.now() - seed) / 1000).toFixed(1)} s; ` +
      `scope ${(SCOPE_HOSTS * PER_HOST).toLocaleString('en-US')} cases on ${SCOPE_HOSTS} hosts, ` +
      `${(SCOPE_HOSTS * SEEN_PER_HOST).toLocaleString('en-US')} seen again; load average ${load()}`,
  );
  const scope: ScanScope = {
    scanners: ['Nessus'],
    hosts: Array.from({ length: SCOPE_HOSTS }, (_, h) => ({ ip: ip(h), fqdn: null, host: `h${h}` })),
    tooManyHosts: false,
    subjects: [],
  };
  const keys = scope.hosts.map((h) => JSON.stringify(['nessus', `ip:${h.ip}`]).replace(',', ', '));

  async function run(resolveMissing: boolean): Promise<{ ms: number; resolved: number }> {
    // The same starting state for every run: the scope open, last sighted by the seed scan.
    await pool.query(
      `UPDATE cases SET status = 'open', last_scan_id = $3
       WHERE workspace_id = $1 AND scope = ANY($2::text[]) AND (status <> 'open' OR last_scan_id <> $3)`,
      [ws, keys, seedScan],
    );
    const scanId = await newScan('parsing', resolveMissing);
    await pool.query(
      `INSERT INTO findings (scan_id, record_index, workspace_id, fingerprint, scanner, rule_id, title, severity, host, ip)
       SELECT $1, record_index, workspace_id, fingerprint, scanner, rule_id, title, severity, host, ip
       FROM findings WHERE scan_id = $2`,
      [scanId, template],
    );
    await pool.query('VACUUM ANALYZE cases, findings, case_status_history, scans');
    const t0 = performance.now();
    await completeScan(pool, scanId, { bytes: 1, notes: [], scope });
    const ms = performance.now() - t0;
    const { rows } = await pool.query<{ resolved: number }>(
      `SELECT resolved_cases AS resolved FROM scans WHERE id = $1`,
      [scanId],
    );
    return { ms, resolved: rows[0]!.resolved };
  }

  if (STEPS) {
    await run(false);
    const scanId = await newScan('parsing');
    await pool.query(
      `INSERT INTO findings (scan_id, record_index, workspace_id, fingerprint, scanner, rule_id, title, severity, host, ip)
       SELECT $1, record_index, workspace_id, fingerprint, scanner, rule_id, title, severity, host, ip
       FROM findings WHERE scan_id = $2`,
      [scanId, template],
    );
    await pool.query(
      `UPDATE cases SET status = 'open', last_scan_id = $3
       WHERE workspace_id = $1 AND scope = ANY($2::text[]) AND (status <> 'open' OR last_scan_id <> $3)`,
      [ws, keys, seedScan],
    );
    await pool.query('VACUUM ANALYZE cases, findings, case_status_history, scans');
    const k = { scanners: scope.scanners, hosts: scope.hosts, hostless: null };
    const steps: string[] = [];
    await withTransaction(pool, async (tx) => {
      let t = performance.now();
      const lap = (name: string) => {
        const now = performance.now();
        steps.push(`${name} ${(now - t).toFixed(0)} ms`);
        t = now;
      };
      await lockScanScope(tx, ws, k);
      lap('lock');
      await upsertScanCases(tx, scanId, ws, null);
      lap('upsert');
      const resolved = await resolveUnseenCases(tx, scanId, ws, k);
      lap('resolve');
      await recordScanDeliveries(tx, ws, scanId, { created: 0, reopened: 0, resolved });
      lap('deliveries');
      await tx.query('ROLLBACK');
      await tx.query('BEGIN');
    });
    console.log(`steps (one run, rolled back): ${steps.join(', ')}`);
  }
  const on: number[] = [];
  const off: number[] = [];
  console.log('\nrun | resolveMissing | completeScan ms | resolved | load average');
  for (let i = 0; i < RUNS; i++) {
    for (const mode of i % 2 === 0 ? [false, true] : [true, false]) {
      const r = await run(mode);
      (mode ? on : off).push(r.ms);
      console.log(
        `${i + 1}   | ${String(mode).padEnd(14)} | ${r.ms.toFixed(0).padStart(15)} | ${r.resolved} | ${load()}`,
      );
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `\nmedian: with resolution ${median(on).toFixed(0)} ms, resolveMissing=false ${median(off).toFixed(0)} ms, ` +
      `× ${(median(on) / median(off)).toFixed(2)} (target ≤ 1.3)`,
  );
} finally {
  await bench.close();
}
