/**
 * Mapped workflows at scale (docs/workflows.md), in process against PostgreSQL and a fake Jira on
 * 127.0.0.1 answering after `--latency` ms:
 *
 * - the rule's set-based selection: `insertMatchingDeliveries` for a scan whose `--cases` cases
 *   are all new, with the rule {priority: CRITICAL/HIGH, status: open, severity: CRITICAL/HIGH}
 *   (a fifth of the cases triaged CRITICAL or HIGH), median of `--runs`;
 *   Beside it, the rule's WHERE alone as a count (no deliveries written) and, as the same run's baseline, the plain count of those cases (`SELECT count(*) …
 *   WHERE first_scan_id = …`): the ratio says what the rule and the INSERT add to reading them.
 * - delivery throughput: `--deliveries` cases delivered to the fake Jira through the `deliveries`
 *   queue (PostgreSQL backend) by one worker of `--concurrency`, the workflow's target limited to
 *   `--rate` requests a second (0: no limit), paced in process: deliveries/s, the p50/p99 delay
 *   from the delivery's creation to its end, and the most requests the fake Jira received in any
 *   1 s window (sliding, from each request's arrival time), which must not exceed `--rate`.
 *
 *   npx tsx bench/workflows/deliveries.ts [--cases 100000] [--deliveries 500] [--latency 50] [--concurrency 8]
 *     [--rate 100] [--runs 3]
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { createBenchDatabase } from '../lib/bench-db.js';
import { createOrm, migrate } from '../../src/db/orm.js';
import { createPool } from '../../src/db/pool.js';
import { createQueueKit } from '../../src/jobs/queue-kit.js';
import { createLogger } from '../../src/lib/logger.js';
import { insertMatchingDeliveries } from '../../src/domain/workflows/delivery-store.js';
import { insertWorkflow } from '../../src/domain/workflows/workflow-store.js';
import { sql } from '../../src/db/sql.js';
import { ruleWhere } from '../../src/domain/workflows/rule-sql.js';
import { sealWorkflowSecret } from '../../src/domain/workflows/sealing.js';
import { createWorkflowTrigger } from '../../src/domain/workflows/trigger.js';
import { enqueueDeliveries } from '../../src/jobs/workflow-delivery.js';
import { startDeliveryWorker } from '../../src/workers/delivery-worker.js';
import { localPacer } from '../../src/domain/workflows/rate-limit.js';
import { startFakeJira, type FakeRequest } from '../../test/helpers/fake-providers/issue-trackers.js';
import { casesChanged } from '../../test/helpers/case-changes.js';

const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1]! : d);
const N = Number(opt('cases', '100000'));
const D = Number(opt('deliveries', '500'));
const LATENCY = Number(opt('latency', '50'));
const CONCURRENCY = Number(opt('concurrency', '8'));
const RUNS = Number(opt('runs', '3'));
const RATE = Number(opt('rate', '100'));

/** The most requests that arrived within any 1,000 ms (a sliding window over arrival times). */
function maxInAnySecond(requests: FakeRequest[]): number {
  const at = requests.map((r) => r.at).sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < at.length; i++) {
    while (at[i]! - at[j]! >= 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const PEPPER = 'bench-pepper'.padEnd(48, 'x');

const db = await createBenchDatabase('bench_workflows');
const orm = await createOrm(db.url, { poolMax: 2 });
await migrate(orm, db.url);
await orm.close(true);
const pool = createPool(db.url, 12);
const kit = createQueueKit({ redisUrl: null, databaseUrl: db.url, namespace: `bench${Date.now()}` });
const jira = await startFakeJira({ email: 'bot@acme.test', token: 'tok', project: 'SEC' });
jira.latencyMs = LATENCY;
try {
  const ws = (
    await pool.query<{ id: string }>(
      `INSERT INTO workspaces (id, name, plan) VALUES (gen_random_uuid(), 'bench', 'service') RETURNING id`,
    )
  ).rows[0]!.id;
  const scanId = randomUUID();
  const seed = performance.now();
  await pool.query(
    `INSERT INTO cases (workspace_id, fingerprint, title, severity, scanner, cve_ids, first_scan_id, last_scan_id,
                        first_seen, last_seen, sightings)
     SELECT $1, 'fp-' || i, 'case ' || i, (ARRAY['CRITICAL','HIGH','MEDIUM','LOW','INFO'])[1 + i % 5], 'bench',
            ARRAY['CVE-2099-' || lpad((i % 5000)::text, 5, '0')], $3::uuid, $3::uuid, now(), now(), 1
     FROM generate_series(1, $2::int) i`,
    [ws, N, scanId],
  );
  await pool.query(
    `UPDATE cases SET priority = severity, priority_rank = 0, recommended_action = 'PATCH_IMMEDIATELY', reasoning = 'b',
       confidence_score = 0.9, model = 'local:b', triaged_at = now(), policy_version = 'p', triaged_kev = false
     WHERE workspace_id = $1 AND seq % 2 = 0`,
    [ws],
  );
  await pool.query('ANALYZE cases');
  console.log(`seeded ${N} cases in ${((performance.now() - seed) / 1000).toFixed(1)} s`);

  const mk = async (rule: object, rateLimit?: { requests: number; perSeconds: number }) => {
    const id = randomUUID();
    return insertWorkflow(pool, {
      id,
      workspaceId: ws,
      name: 'bench',
      kind: 'jira',
      enabled: true,
      target: {
        kind: 'jira',
        baseUrl: jira.url,
        email: 'bot@acme.test',
        projectKey: 'SEC',
        issueType: 'Bug',
        transitions: { done: 'Done', reopen: 'To Do' },
        ...(rateLimit ? { rateLimit } : {}),
      },
      credentialSealed: sealWorkflowSecret(PEPPER, id, 'tok'),
      credentialHint: '…tok',
      secretSealed: sealWorkflowSecret(PEPPER, id, 'whsec_x'),
      rule,
      fields: {},
      statusMap: {},
    });
  };
  const selective = await mk({
    priority: ['CRITICAL', 'HIGH'],
    status: ['open'],
    severity: ['CRITICAL', 'HIGH'],
  });
  const times: number[] = [];
  const counts: number[] = [];
  const selects: number[] = [];
  const where = sql.join(ruleWhere(selective.rule), sql` AND `);
  let matched = 0;
  for (let i = 0; i < RUNS; i++) {
    const c0 = performance.now();
    await pool.query(`SELECT count(*) FROM cases WHERE workspace_id = $1 AND first_scan_id = $2`, [
      ws,
      scanId,
    ]);
    counts.push(performance.now() - c0);
    // The rule's selection alone (the WHERE the INSERT … SELECT uses), without writing deliveries.
    const s0 = performance.now();
    await pool.query(
      sql`SELECT count(*) FROM cases c WHERE c.workspace_id = ${ws} AND c.first_scan_id = ${scanId} AND ${where}`,
    );
    selects.push(performance.now() - s0);
    const t0 = performance.now();
    matched = (await insertMatchingDeliveries(pool, selective, { createdByScan: scanId }, 'case.created'))
      .length;
    times.push(performance.now() - t0);
    await pool.query('DELETE FROM workflow_deliveries');
  }
  const fmt = (xs: number[]) => xs.map((t) => t.toFixed(0)).join(', ');
  console.log(
    `rule selection over ${N} new cases of a scan: ${matched} matched, median ${median(times).toFixed(0)} ms (runs ${fmt(times)}); ` +
      `the rule's WHERE alone (count, no insert) median ${median(selects).toFixed(0)} ms (runs ${fmt(selects)}); ` +
      `baseline count(*) of the scan's cases median ${median(counts).toFixed(0)} ms (runs ${fmt(counts)}); ` +
      `ratios ${(median(times) / median(counts)).toFixed(1)} and ${(median(selects) / median(counts)).toFixed(1)}`,
  );
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  await pool.query('UPDATE workflows SET enabled = false');

  // --deliveries 0: the selection alone.
  if (D > 0) {
    const wf = await mk({}, RATE > 0 ? { requests: RATE, perSeconds: 1 } : undefined);
    const requestsBefore = jira.requests.length;
    const ids = (
      await pool.query<{ id: string }>(`SELECT id FROM cases ORDER BY seq LIMIT $1`, [D])
    ).rows.map((r) => r.id);
    const worker = startDeliveryWorker(
      kit,
      {
        pool,
        pepper: PEPPER,
        clock: () => new Date(),
        baseUrl: 'https://vt.example',
        http: { allowLoopbackHttp: true, allowPrivateHosts: true },
        pacer: localPacer(),
      },
      { logger: createLogger('error'), concurrency: CONCURRENCY },
    );
    const trigger = createWorkflowTrigger({
      pool,
      enqueue: (workflowId, list) => enqueueDeliveries(kit, workflowId, list),
    });
    const t0 = performance.now();
    await casesChanged(pool, trigger, ws, ids, 'case.updated');
    for (;;) {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM workflow_deliveries WHERE workflow_id = $1 AND status <> 'pending'`,
        [wf.id],
      );
      if (rows[0]!.n >= D) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const wall = (performance.now() - t0) / 1000;
    const { rows } = await pool.query<{ p50: number; p99: number; failed: number; issues: number }>(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - created_at)) * 1000 AS p50,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - created_at)) * 1000 AS p99,
            count(*) FILTER (WHERE status = 'failed')::int AS failed,
            (SELECT count(*)::int FROM workflow_links WHERE workflow_id = $1 AND external_id IS NOT NULL) AS issues
     FROM workflow_deliveries WHERE workflow_id = $1`,
      [wf.id],
    );
    const r = rows[0]!;
    const sent = jira.requests.slice(requestsBefore);
    console.log(
      `deliveries: ${D} to a fake Jira (${LATENCY} ms per call), concurrency ${CONCURRENCY}, limit ${RATE > 0 ? `${RATE}/s` : 'none'}: ` +
        `${(D / wall).toFixed(1)}/s over ${wall.toFixed(1)} s, p50 ${Number(r.p50).toFixed(0)} ms, p99 ${Number(r.p99).toFixed(0)} ms from creation; ` +
        `failed ${r.failed}; issues ${r.issues} (fake has ${jira.issues.length}); requests ${sent.length}, ` +
        `most in any 1 s window ${maxInAnySecond(sent)}${RATE > 0 ? ` (limit ${RATE}: ${maxInAnySecond(sent) <= RATE ? 'held' : 'EXCEEDED'})` : ''}`,
    );
    console.log(
      `load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    await worker.close();
  }
} finally {
  await kit.close();
  await jira.close();
  await pool.end();
  if (!args.includes('--keep')) await db.drop();
}
