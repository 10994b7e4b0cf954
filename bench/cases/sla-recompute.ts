/**
 * SLA recomputation after a policy change (docs/cases.md#due-dates-and-sla): one workspace of
 * `--cases` cases (every severity, half triaged, 1 in 50 carrying a KEV CVE), timed in process
 * against PostgreSQL. `putSlaPolicy` stores the policy and recomputes every case that is not
 * resolved in ONE statement; each run alternates a changed policy (every due date moves, every row
 * is written) with the same policy again (every due date computed, none moves: the baseline in the
 * same run, the cost of reading and computing without writing).
 *
 *   npx tsx bench/cases/sla-recompute.ts [--cases 1000000] [--runs 3]
 */
import { loadavg } from 'node:os';
import { migratedBenchDatabase } from '../lib/migrated-db.js';
import { DEFAULT_SLA_POLICY, putSlaPolicy } from '../../src/domain/cases/sla-policy-store.js';

const OPERATOR = { actor: 'operator', ip: null, userAgent: null };
const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1]! : d);
const N = Number(opt('cases', '1000000'));
const RUNS = Number(opt('runs', '3'));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

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
                        first_seen, last_seen, sightings, status)
     SELECT $1, 'fp-' || i, 'case ' || i, (ARRAY['CRITICAL','HIGH','MEDIUM','LOW','INFO'])[1 + i % 5], 'bench',
            ARRAY['CVE-2099-' || lpad((i % 5000)::text, 5, '0')], gen_random_uuid(), gen_random_uuid(),
            now() - (i % 1000) * interval '1 hour', now(), 1, CASE WHEN i % 10 = 0 THEN 'resolved' ELSE 'open' END
     FROM generate_series(1, $2::int) i`,
    [ws, N],
  );
  await pool.query(
    `UPDATE cases SET priority = (ARRAY['CRITICAL','HIGH','MEDIUM'])[1 + seq % 3], priority_rank = seq % 3,
       recommended_action = 'MONITOR', reasoning = 'bench', confidence_score = 0.8, model = 'local:ssvc',
       triaged_at = now(), policy_version = 'bench', triaged_kev = false
     WHERE seq % 2 = 0`,
  );
  await putSlaPolicy(pool, ws, DEFAULT_SLA_POLICY, OPERATOR);
  await pool.query('VACUUM ANALYZE cases');
  const open = (await pool.query<{ n: string }>(`SELECT count(*) AS n FROM cases WHERE status <> 'resolved'`))
    .rows[0]!.n;
  console.log(
    `${N.toLocaleString('en-US')} cases (${Number(open).toLocaleString('en-US')} not resolved) seeded in ` +
      `${((performance.now() - seed) / 1000).toFixed(1)} s; load average ${load()}`,
  );
  const tighter = { ...DEFAULT_SLA_POLICY, days: { CRITICAL: 3, HIGH: 14, MEDIUM: 60, LOW: 120, INFO: 365 } };
  console.log('run | policy changed (rows written) | same policy again (rows written) | × | load');
  for (let run = 1; run <= RUNS; run++) {
    const policy = run % 2 === 1 ? tighter : DEFAULT_SLA_POLICY;
    let t0 = performance.now();
    const changed = await putSlaPolicy(pool, ws, policy, OPERATOR);
    const changedS = (performance.now() - t0) / 1000;
    t0 = performance.now();
    const same = await putSlaPolicy(pool, ws, policy, OPERATOR);
    const sameS = (performance.now() - t0) / 1000;
    console.log(
      `${run} | ${changedS.toFixed(1)} s (${changed.recomputed.toLocaleString('en-US')}) | ` +
        `${sameS.toFixed(1)} s (${same.recomputed}) | ${(changedS / sameS).toFixed(2)} | ${load()}`,
    );
    await pool.query('VACUUM cases');
  }
} finally {
  await bench.close();
}
