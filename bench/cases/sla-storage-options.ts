/**
 * Where due dates could live, measured against each other (docs/cases.md#due-dates-and-sla): one
 * workspace of `--cases` cases seeded as `sla-recompute.ts` seeds them (every severity, half
 * triaged, 1 in 10 resolved, 1 in 50 carrying one of 100 KEV CVEs), then one policy change
 * (CRITICAL 7 → 3, HIGH 30 → 14, MEDIUM 90 → 60, LOW 180 → 120 days) timed four ways, and the
 * first page of the `dueAt` sort read three ways. The options other than today's are prototypes
 * in SQL on this scratch database only (extra columns, tables and indexes the schema does not have):
 *
 * - today: `putSlaPolicy`, `cases.due_at` rewritten in one statement (the baseline in the same run);
 * - (a) a narrow side table `(case_id, workspace_id, seq, due_at, breach_due_at, open)` with its
 *   primary key, the sort index and the breach sweep's partial index: every moved row a new tuple
 *   and an entry in each of its three indexes;
 * - (a′) the same table with its primary key only and fillfactor 50: updates stay HOT, but nothing
 *   serves the sort or the sweep;
 * - (b) due dates computed at read time from a stored basis (`kev_due_at`, `sla_exposed` on the case,
 *   a resolved case's due date frozen): a policy change writes its one row; what it still computes
 *   is `recomputed`, the count of open cases whose due date moved.
 *
 * Reads: today's `listCases(sort=dueAt)` (an index walk), (b) as a top-N over an expression, and
 * (b) as a merge of one index walk per (urgency, exposure) class plus the KEV and resolved streams.
 *
 * Since m034 the schema is (b) (`sla-recompute.ts` measures it as built): "today" is then
 * `putSlaPolicy` of m034 and the figures of the stored due dates are those of bench/README.md.
 *
 *   npx tsx bench/cases/sla-storage-options.ts [--cases 1000000] [--runs 3] [--skip-today]
 */
import { loadavg } from 'node:os';
import { migratedBenchDatabase } from '../lib/migrated-db.js';
import { DEFAULT_SLA_POLICY, putSlaPolicy } from '../../src/domain/cases/sla-policy-store.js';
import { listCases } from '../../src/domain/cases/case-store.js';

const OPERATOR = { actor: 'operator', ip: null, userAgent: null };
const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1]! : d);
const N = Number(opt('cases', '1000000'));
const RUNS = Number(opt('runs', '3'));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

const OLD = { CRITICAL: 7, HIGH: 30, MEDIUM: 90, LOW: 180 } as const;
const NEW = { CRITICAL: 3, HIGH: 14, MEDIUM: 60, LOW: 120 } as const;
const EFF = `(CASE WHEN c.triaged_at IS NULL THEN c.severity ELSE c.priority END)`;
/** A due date from the stored basis under `days` (INFO: none). */
const dueSql = (days: Record<string, number>) =>
  `LEAST(c.first_seen + make_interval(days => CASE ${EFF} ${Object.entries(days)
    .map(([p, d]) => `WHEN '${p}' THEN ${d}`)
    .join(' ')} END), c.kev_due_at)`;

async function timed(fn: () => Promise<unknown>): Promise<{ s: number }> {
  const t0 = performance.now();
  await fn();
  return { s: (performance.now() - t0) / 1000 };
}

const bench = await migratedBenchDatabase('bench_sla_options', 1);
const { pool, workspaceId: ws } = bench;
/**
 * CPU seconds (user + system) the pool's one backend has used so far, from /proc (the database
 * runs on this machine); parallel workers a query may start are not counted.
 */
async function backendCpu(): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const stat = await readFile(`/proc/${rows[0]!.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}
/** Wall time and the backend's CPU seconds of `fn`. */
async function measured(fn: () => Promise<unknown>): Promise<string> {
  const c0 = await backendCpu();
  const t = await timed(fn);
  return `${t.s.toFixed(2)} s (CPU ${((await backendCpu()) - c0).toFixed(1)} s)`;
}

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
  // (b)'s basis, kept on the case: the KEV due date and the exposure (none exposed here).
  await pool.query(
    `ALTER TABLE cases ADD COLUMN IF NOT EXISTS kev_due_at timestamptz,
       ADD COLUMN IF NOT EXISTS sla_exposed boolean NOT NULL DEFAULT false`,
  );
  await pool.query(
    `UPDATE cases c SET kev_due_at = (SELECT (min(k.due_date) + 1)::timestamp AT TIME ZONE 'UTC'
       FROM kev_entries k WHERE k.cve_id = ANY(c.cve_ids)) WHERE c.cve_ids && (SELECT array_agg(cve_id) FROM kev_entries)`,
  );
  await pool.query(
    `CREATE INDEX bench_due_class_idx ON cases (workspace_id, ${EFF.replaceAll('c.', '')}, sla_exposed, first_seen, seq DESC)
       WHERE status <> 'resolved'`,
  );
  await pool.query(
    `CREATE INDEX bench_due_kev_idx ON cases (workspace_id, kev_due_at, seq DESC) WHERE status <> 'resolved' AND kev_due_at IS NOT NULL`,
  );
  await pool.query(
    `CREATE INDEX bench_due_resolved_idx ON cases (workspace_id, due_at, seq DESC) WHERE status = 'resolved' AND due_at IS NOT NULL`,
  );
  for (const [name, indexes, fill] of [
    ['side_a', true, 100],
    ['side_a2', false, 50],
  ] as const) {
    await pool.query(
      `CREATE TABLE ${name} (case_id uuid PRIMARY KEY, workspace_id uuid NOT NULL, seq bigint NOT NULL, due_at timestamptz,
         breach_due_at timestamptz, open boolean NOT NULL) WITH (fillfactor = ${fill})`,
    );
    await pool.query(
      `INSERT INTO ${name} SELECT id, workspace_id, seq, due_at, NULL, status IN ('open', 'in_progress') FROM cases`,
    );
    if (indexes) {
      await pool.query(
        `CREATE INDEX ${name}_sort_idx ON ${name} (workspace_id, coalesce(due_at, '9999-12-31T00:00:00Z'::timestamptz), seq DESC)`,
      );
      await pool.query(
        `CREATE INDEX ${name}_sweep_idx ON ${name} (due_at) WHERE open AND due_at IS NOT NULL AND breach_due_at IS DISTINCT FROM due_at`,
      );
    }
  }
  await pool.query('VACUUM ANALYZE');
  console.log(
    `${N.toLocaleString('en-US')} cases seeded in ${((performance.now() - seed) / 1000).toFixed(1)} s; load average ${load()}`,
  );

  const tighter = { ...DEFAULT_SLA_POLICY, days: { ...NEW, INFO: null } };
  console.log('\nA policy change (every open due date moves), wall time (CPU of the database backend)');
  console.log(
    'run | today: putSlaPolicy | (a) side table, 3 indexes | (a′) side table, HOT | (b) one row + recomputed count | load',
  );
  for (let run = 1; run <= RUNS; run++) {
    const [from, to] = run % 2 === 1 ? [OLD, NEW] : [NEW, OLD];
    const today = args.includes('--skip-today')
      ? 'skipped'
      : await measured(() => putSlaPolicy(pool, ws, run % 2 === 1 ? tighter : DEFAULT_SLA_POLICY, OPERATOR));
    const side = (name: string) =>
      measured(() =>
        pool.query(
          `UPDATE ${name} d SET due_at = n.due FROM (SELECT c.id, ${dueSql(to)} AS due FROM cases c
             WHERE c.workspace_id = $1 AND c.status <> 'resolved') n
           WHERE d.case_id = n.id AND d.due_at IS DISTINCT FROM n.due`,
          [ws],
        ),
      );
    const a = await side('side_a');
    const a2 = await side('side_a2');
    let moved = 0;
    const b = await measured(async () => {
      await pool.query(
        `UPDATE sla_policies SET critical_days = $2, high_days = $3, medium_days = $4, low_days = $5, updated_at = now()
          WHERE workspace_id = $1`,
        [ws, to.CRITICAL, to.HIGH, to.MEDIUM, to.LOW],
      );
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM cases c WHERE c.workspace_id = $1 AND c.status <> 'resolved'
            AND ${dueSql(from)} IS DISTINCT FROM ${dueSql(to)}`,
        [ws],
      );
      moved = rows[0]!.n;
    });
    console.log(
      `${run} | ${today} | ${a} | ${a2} | ${b}, ${moved.toLocaleString('en-US')} moved | ${load()}`,
    );
    await pool.query('VACUUM cases, side_a, side_a2');
  }

  // Reads under the policy now in force.
  const days = RUNS % 2 === 1 ? NEW : OLD;
  const median = async (fn: () => Promise<unknown>) => {
    const ts: number[] = [];
    for (let i = 0; i < 5; i++) ts.push((await timed(fn)).s * 1000);
    return ts.sort((x, y) => x - y)[2]!.toFixed(1);
  };
  const trueKey = `CASE WHEN c.status = 'resolved' THEN c.due_at ELSE ${dueSql(days)} END`;
  const streams = [
    ...Object.entries(days).map(
      ([p, d]) =>
        `(SELECT c.id, c.seq, ${trueKey} AS k FROM cases c WHERE c.workspace_id = $1 AND c.status <> 'resolved'
            AND ${EFF} = '${p}' AND NOT c.sla_exposed ORDER BY c.first_seen, c.seq DESC LIMIT 50)` +
        ` /* ${d} days */`,
    ),
    `(SELECT c.id, c.seq, ${trueKey} AS k FROM cases c WHERE c.workspace_id = $1 AND c.status <> 'resolved'
        AND c.kev_due_at IS NOT NULL ORDER BY c.kev_due_at, c.seq DESC LIMIT 50)`,
    `(SELECT c.id, c.seq, c.due_at AS k FROM cases c WHERE c.workspace_id = $1 AND c.status = 'resolved'
        AND c.due_at IS NOT NULL ORDER BY c.due_at, c.seq DESC LIMIT 50)`,
  ];
  const merged = `SELECT DISTINCT ON (k, seq, id) id, k, seq FROM (${streams.join(' UNION ALL ')}) s
                  ORDER BY k, seq DESC, id LIMIT 50`;
  const topN = `SELECT c.id FROM cases c WHERE c.workspace_id = $1
                ORDER BY coalesce(${trueKey}, '9999-12-31'::timestamptz), c.seq DESC LIMIT 50`;
  const m = await pool.query(merged, [ws]);
  const n = await pool.query(topN, [ws]);
  const same =
    m.rows.map((r: { id: string }) => r.id).join() === n.rows.map((r: { id: string }) => r.id).join();
  console.log('\nThe dueAt sort, first page of 50 (median of 5, ms)');
  console.log(
    `listCases(sort=dueAt) of the schema in force: ${await median(() => listCases(pool, ws, { limit: 50, sort: 'dueAt' }))}`,
  );
  console.log(`(b) top-N over the computed key: ${await median(() => pool.query(topN, [ws]))}`);
  console.log(
    `(b) merge of index walks by class: ${await median(() => pool.query(merged, [ws]))} (same page as the top-N: ${same})`,
  );
  if (args.includes('--explain')) {
    const plan = await pool.query(`EXPLAIN (ANALYZE, COSTS OFF) ${merged}`, [ws]);
    console.log(plan.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n'));
  }
  console.log(`load average ${load()}`);
} finally {
  await bench.close();
}
