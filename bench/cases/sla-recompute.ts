/**
 * SLA policy changes, the `dueAt` sort and the breach sweep at scale, with due dates computed at
 * read time (docs/cases.md#due-dates-and-sla): one workspace of `--cases` cases (every severity,
 * half triaged, 1 in 10 resolved, 1 in 50 carrying a KEV CVE, 1 in 7 on an exposed asset), timed
 * in process against PostgreSQL.
 *
 * - `putSlaPolicy` with a changed policy (every open due date moves) against the same policy put
 *   again (the baseline in the same run): both store the row and count the open cases whose due
 *   date moved in one statement; the change also clears announced breaches moved later.
 * - `listCases(sort=dueAt)` first page (50) and a page 20 pages deep against the unsorted list.
 * - `announceSlaBreaches` with about `--breaches` breaches due, against the same sweep with none.
 *
 *   npx tsx bench/cases/sla-recompute.ts [--cases 1000000] [--runs 3] [--breaches 10000]
 */
import { loadavg } from 'node:os';
import { migratedBenchDatabase } from '../lib/migrated-db.js';
import { listCases } from '../../src/domain/cases/case-store.js';
import type { CaseSort } from '../../src/domain/cases/case-sort.js';
import { DEFAULT_SLA_POLICY, putSlaPolicy } from '../../src/domain/cases/sla-policy-store.js';
import { announceSlaBreaches } from '../../src/domain/workflows/sla-breaches.js';

const OPERATOR = { actor: 'operator', ip: null, userAgent: null };
const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1]! : d);
const N = Number(opt('cases', '1000000'));
const RUNS = Number(opt('runs', '3'));
const BREACHES = Number(opt('breaches', '10000'));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const seconds = async (fn: () => Promise<unknown>) => {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
};

const bench = await migratedBenchDatabase('bench_sla_recompute', 2);
const { pool, workspaceId: ws } = bench;
try {
  const seed = performance.now();
  await pool.query(
    `INSERT INTO kev_entries (cve_id, due_date) SELECT 'CVE-2099-' || lpad(i::text, 5, '0'), current_date + (i % 60)
       FROM generate_series(0, 99) i`,
  );
  await pool.query(
    `INSERT INTO cases (workspace_id, fingerprint, title, severity, scanner, cve_ids, first_scan_id, last_scan_id,
                        first_seen, last_seen, sightings, sla_exposed, kev_due_at)
     SELECT $1, 'fp-' || i, 'case ' || i, (ARRAY['CRITICAL','HIGH','MEDIUM','LOW','INFO'])[1 + i % 5], 'bench',
            ARRAY['CVE-2099-' || lpad((i % 5000)::text, 5, '0')], gen_random_uuid(), gen_random_uuid(),
            now() - (i % 1000) * interval '1 hour', now(), 1, i % 7 = 0,
            CASE WHEN i % 5000 < 100 THEN (current_date + (i % 5000) % 60 + 1)::timestamp AT TIME ZONE 'UTC' END
     FROM generate_series(1, $2::int) i`,
    [ws, N],
  );
  await pool.query(
    `UPDATE cases SET priority = (ARRAY['CRITICAL','HIGH','MEDIUM'])[1 + seq % 3], priority_rank = seq % 3,
       recommended_action = 'MONITOR', reasoning = 'bench', confidence_score = 0.8, model = 'local:ssvc',
       triaged_at = now(), policy_version = 'bench', triaged_kev = false
     WHERE seq % 2 = 0`,
  );
  // Resolved through the status, so each keeps the due date it was resolved against.
  await pool.query(`UPDATE cases SET status = 'resolved' WHERE seq % 10 = 0`);
  await pool.query('VACUUM ANALYZE cases');
  const open = (await pool.query<{ n: string }>(`SELECT count(*) AS n FROM cases WHERE status <> 'resolved'`))
    .rows[0]!.n;
  console.log(
    `${N.toLocaleString('en-US')} cases (${Number(open).toLocaleString('en-US')} not resolved) seeded in ` +
      `${((performance.now() - seed) / 1000).toFixed(1)} s; load average ${load()}`,
  );

  const tighter = {
    ...DEFAULT_SLA_POLICY,
    days: { CRITICAL: 3, HIGH: 14, MEDIUM: 60, LOW: 120, INFO: 365 },
  };
  console.log('\nA policy change\nrun | policy changed (moved) | same policy again (moved) | × | load');
  for (let run = 1; run <= RUNS; run++) {
    const policy = run % 2 === 1 ? tighter : DEFAULT_SLA_POLICY;
    let changed = { recomputed: 0 };
    const changedS = await seconds(async () => (changed = await putSlaPolicy(pool, ws, policy, OPERATOR)));
    let same = { recomputed: 0 };
    const sameS = await seconds(async () => (same = await putSlaPolicy(pool, ws, policy, OPERATOR)));
    console.log(
      `${run} | ${changedS.toFixed(2)} s (${changed.recomputed.toLocaleString('en-US')}) | ` +
        `${sameS.toFixed(2)} s (${same.recomputed}) | ${(changedS / sameS).toFixed(2)} | ${load()}`,
    );
  }

  const median = async (fn: () => Promise<unknown>) => {
    const ts: number[] = [];
    for (let i = 0; i < 5; i++) ts.push((await seconds(fn)) * 1000);
    return ts.sort((x, y) => x - y)[2]!;
  };
  console.log(
    '\nThe case list, median of 5 (ms)\nsort | first page | page 21 | × unsorted (first / deep) | load',
  );
  let base = [1, 1];
  for (const sort of [undefined, 'dueAt'] as (CaseSort | undefined)[]) {
    const first = await median(() => listCases(pool, ws, { limit: 50, sort }));
    let cursor: string | undefined;
    for (let p = 0; p < 20; p++)
      cursor = (await listCases(pool, ws, { limit: 50, sort, cursor })).nextCursor!;
    const deep = await median(() => listCases(pool, ws, { limit: 50, sort, cursor }));
    if (!sort) base = [first, deep];
    console.log(
      `${sort ?? '(none)'} | ${first.toFixed(1)} | ${deep.toFixed(1)} | ` +
        `${(first / base[0]!).toFixed(1)} / ${(deep / base[1]!).toFixed(1)} | ${load()}`,
    );
  }

  // About BREACHES cases past due: CRITICAL cases whose first sighting is older than the window.
  const { rows: crit } = await pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM cases WHERE status = 'open'
        AND (CASE WHEN triaged_at IS NULL THEN severity ELSE priority END) = 'CRITICAL'`,
  );
  const hours = Math.max(1, Math.round(1000 * (1 - BREACHES / Number(crit[0]!.n))));
  const never = { CRITICAL: 3650, HIGH: 3650, MEDIUM: 3650, LOW: 3650, INFO: null };
  await putSlaPolicy(pool, ws, { ...DEFAULT_SLA_POLICY, days: never }, OPERATOR);
  await pool.query(`UPDATE kev_entries SET due_date = current_date + 3650`);
  await pool.query(
    `UPDATE cases SET kev_due_at = kev_due_at + interval '3650 days' WHERE kev_due_at IS NOT NULL`,
  );
  const sweep = { pool, enqueue: async () => {} };
  const none = await seconds(() => announceSlaBreaches(sweep, new Date()));
  await putSlaPolicy(
    pool,
    ws,
    { ...DEFAULT_SLA_POLICY, days: { ...never, CRITICAL: Math.ceil(hours / 24) } },
    OPERATOR,
  );
  let claimed = { breaches: 0 };
  const due = await seconds(async () => (claimed = await announceSlaBreaches(sweep, new Date())));
  const after = await seconds(() => announceSlaBreaches(sweep, new Date()));
  console.log(
    `\nThe breach sweep: ${claimed.breaches.toLocaleString('en-US')} breaches due ${due.toFixed(2)} s; ` +
      `nothing due ${none.toFixed(3)} s before, ${after.toFixed(3)} s after; load average ${load()}`,
  );
} finally {
  await bench.close();
}
