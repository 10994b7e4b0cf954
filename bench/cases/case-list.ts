/**
 * Case list sorts and stale marking at scale (docs/cases.md#sorts): one workspace of `--cases` cases (half
 * triaged, CVEs drawn from 5,000 with EPSS scores), timed in process against PostgreSQL.
 *
 * - `listCases` first page (50) and a page 20 pages deep, per sort (`dueAt` under the default SLA
 *   policy), against the unsorted list
 *   (newest first, the baseline in the same run).
 * - `markStaleForCves(null)` (what an EPSS or NVD load runs: every triaged, fresh case compared
 *   with its snapshot) when nothing changed and when 10% of the scores moved by 0.2, against
 *   `markStaleForCves(cves)` for the 10 CVEs a KEV update typically changes.
 *
 *   npx tsx bench/cases/case-list.ts [--cases 100000] [--runs 5]
 */
import { loadavg } from 'node:os';
import { migratedBenchDatabase } from '../lib/migrated-db.js';
import { listCases } from '../../src/domain/cases/case-store.js';
import { markStaleForCves } from '../../src/domain/cases/case-triage-store.js';
import type { CaseSort } from '../../src/domain/cases/case-sort.js';
import { DEFAULT_SLA_POLICY, putSlaPolicy } from '../../src/domain/cases/sla-policy-store.js';

const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1]! : d);
const N = Number(opt('cases', '100000'));
const RUNS = Number(opt('runs', '5'));

async function median(fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

const bench = await migratedBenchDatabase('bench_case_list', 4);
const { pool, workspaceId: ws } = bench;
try {
  const seed = performance.now();
  await pool.query(
    `INSERT INTO epss_scores (cve_id, epss, percentile)
     SELECT 'CVE-2099-' || lpad(i::text, 5, '0'), round((random() * 0.9)::numeric, 4), 0.5 FROM generate_series(0, 4999) i`,
  );
  await pool.query(
    `INSERT INTO cases (workspace_id, fingerprint, title, severity, scanner, cve_ids, first_scan_id, last_scan_id,
                        first_seen, last_seen, sightings)
     SELECT $1, 'fp-' || i, 'case ' || i, (ARRAY['CRITICAL','HIGH','MEDIUM','LOW','INFO'])[1 + i % 5], 'bench',
            ARRAY['CVE-2099-' || lpad((i % 5000)::text, 5, '0')], gen_random_uuid(), gen_random_uuid(),
            now() - (i % 1000) * interval '1 hour', now() - (i % 97) * interval '1 hour', 1
     FROM generate_series(1, $2::int) i`,
    [ws, N],
  );
  // Half triaged, with the snapshot a triage takes (recordCaseTriages does the same per answer).
  await pool.query(
    `UPDATE cases c SET priority = p.priority, recommended_action = 'PATCH_SCHEDULED', reasoning = 'bench',
       confidence_score = 0.8, model = 'local:ssvc', triaged_at = now(), policy_version = 'bench',
       priority_rank = p.rank, triaged_kev = false,
       triaged_epss = (SELECT max(e.epss) FROM epss_scores e WHERE e.cve_id = ANY(c.cve_ids))
     FROM (SELECT id, (ARRAY['CRITICAL','HIGH','MEDIUM','LOW','INFO'])[1 + seq % 5] AS priority, (seq % 5)::smallint AS rank
           FROM cases WHERE seq % 2 = 0) p
     WHERE c.id = p.id`,
  );
  // Due dates under the default policy, as the app keeps them (for the `dueAt` sort).
  await putSlaPolicy(pool, ws, DEFAULT_SLA_POLICY, { actor: 'operator', ip: null, userAgent: null });
  await pool.query('VACUUM ANALYZE');
  console.log(
    `${N.toLocaleString('en-US')} cases (half triaged) seeded in ${((performance.now() - seed) / 1000).toFixed(1)} s; ` +
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );

  console.log('\nlistCases, limit 50 (median of %d runs, ms)', RUNS);
  console.log('sort       | first page | page 21 | × baseline (first / deep)');
  let base: [number, number] = [0, 0];
  for (const sort of [undefined, 'priority', 'lastSeen', 'firstSeen', 'epss', 'dueAt'] as (
    CaseSort | undefined
  )[]) {
    let cursor: string | undefined;
    for (let p = 0; p < 20; p++)
      cursor = (await listCases(pool, ws, { limit: 50, sort, cursor })).nextCursor ?? undefined;
    const first = await median(() => listCases(pool, ws, { limit: 50, sort }));
    const deep = await median(() => listCases(pool, ws, { limit: 50, sort, cursor }));
    if (!sort) base = [first, deep];
    console.log(
      `${(sort ?? '(none)').padEnd(10)} | ${first.toFixed(2).padStart(10)} | ${deep.toFixed(2).padStart(7)} | ` +
        `${(first / base[0]).toFixed(1)} / ${(deep / base[1]).toFixed(1)}`,
    );
  }

  console.log('\nmarkStaleForCves (median of %d runs, ms)', RUNS);
  const none = await median(() => markStaleForCves(pool, null));
  console.log(`null (every triaged case), nothing changed: ${none.toFixed(1)} ms`);
  const kevCves = Array.from({ length: 10 }, (_, i) => `CVE-2099-${String(i * 37).padStart(5, '0')}`);
  const some = await median(() => markStaleForCves(pool, kevCves));
  console.log(`10 CVEs (a KEV update), nothing changed: ${some.toFixed(1)} ms`);
  await pool.query(`UPDATE epss_scores SET epss = least(1, epss + 0.2) WHERE right(cve_id, 1) = '8'`);
  const t0 = performance.now();
  const marked = await markStaleForCves(pool, null);
  console.log(
    `null after 10% of the scores moved by 0.2: ${(performance.now() - t0).toFixed(1)} ms, ${marked.toLocaleString('en-US')} cases marked`,
  );
  if (args.includes('--keep')) console.log(`kept: ${bench.url}`);
} finally {
  await bench.close({ keep: args.includes('--keep') });
}
