import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpWorkflowManager } from '../../helpers/test-app.js';
import { eventually, startScanApp, type ScanTestApp } from '../../helpers/scan-app.js';
import {
  maxPerSecond,
  startFakeJira,
  type FakeTracker,
} from '../../helpers/fake-providers/issue-trackers.js';
import { startDeliveryWorker } from '../../../src/workers/delivery-worker.js';
import { redisPacer } from '../../../src/domain/workflows/rate-limit.js';
import type { WorkerHandle } from '../../../src/jobs/queue-kit.js';
import { casesChanged } from '../../helpers/case-changes.js';

/**
 * A workflow's proactive rate limit (docs/workflows.md#rate-limits): with `target.rateLimit` of N per second, a burst
 * of deliveries reaches the fake Jira at most N times in any second of its clock, and every
 * delivery still completes, on its first attempt (held-back deliveries wait, they never fail).
 * On Redis, two worker "processes" (each its own Redis client and pacer) share one schedule.
 */
const REDIS_URL = 'redis://127.0.0.1:6379';
const AUTH = { email: 'bot@acme.test', token: 'jira-token-rl', project: 'SEC' };
let t: ScanTestApp;
let session: Awaited<ReturnType<typeof signUpWorkflowManager>>;
let jira: FakeTracker;
const clients: Redis[] = [];

const api = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
  t.app.inject({
    method,
    url,
    headers: { 'x-api-key': session.key, ...(payload ? { 'content-type': 'application/json' } : {}) },
    ...(payload ? { payload: JSON.stringify(payload) } : {}),
  });

/** Read from the table, not the API: polling must not spend the key's request budget. */
async function deliveriesOf(workflowId: string) {
  const { rows } = await t.infra.pool.query<{ status: string; attempts: number }>(
    `SELECT status, attempts FROM workflow_deliveries WHERE workflow_id = $1 ORDER BY seq`,
    [workflowId],
  );
  return rows;
}

/** `n` new cases of the workspace, written straight to the table (the delivery path is under test). */
async function newCases(tag: string, n: number): Promise<string[]> {
  const { rows } = await t.infra.pool.query<{ id: string }>(
    `INSERT INTO cases (workspace_id, fingerprint, title, severity, scanner, cve_ids, first_scan_id, last_scan_id,
                        first_seen, last_seen, sightings)
     SELECT $1, $2 || i, 'case ' || i, 'HIGH', 'test', ARRAY['CVE-2099-0001'], gen_random_uuid(), gen_random_uuid(),
            now(), now(), 1
     FROM generate_series(1, $3::int) i RETURNING id`,
    [session.workspaceId, `rl-${tag}-`, n],
  );
  return rows.map((r) => r.id);
}

async function jiraWorkflow(rateLimit: { requests: number; perSeconds: number }) {
  const res = await api('POST', '/api/v1/workflows', {
    name: 'paced',
    target: {
      kind: 'jira',
      baseUrl: jira.url,
      email: AUTH.email,
      apiToken: AUTH.token,
      projectKey: 'SEC',
      rateLimit,
    },
  });
  expect(res.statusCode).toBe(201);
  const wf = res.json() as { id: string; target: { rateLimit: unknown } };
  expect(wf.target.rateLimit).toEqual(rateLimit);
  return wf;
}

async function burst(workflowId: string, caseIds: string[]) {
  const before = jira.requests.length;
  const issuesBefore = jira.issues.length;
  await casesChanged(t.infra.pool, t.deps.workflows.trigger, session.workspaceId, caseIds, 'case.updated');
  expect(
    await eventually(async () => {
      const d = await deliveriesOf(workflowId);
      return d.length === caseIds.length && d.every((x) => x.status !== 'pending');
    }, 40_000),
  ).toBe(true);
  await t.infra.pool.query('UPDATE workflows SET enabled = false WHERE id = $1', [workflowId]);
  return { requests: jira.requests.slice(before), issues: jira.issues.length - issuesBefore };
}

beforeAll(async () => {
  t = await startScanApp({
    redisUrl: REDIS_URL,
    worker: false,
    env: { WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' },
  });
  session = await signUpWorkflowManager(t.app, { plan: 'trial' });
  jira = await startFakeJira(AUTH);
});

afterAll(async () => {
  await jira?.close();
  for (const c of clients) c.disconnect();
  await t?.close();
});

describe("a workflow's rate limit", () => {
  it(
    'a burst of deliveries never exceeds N requests a second at the target, and all complete on their first attempt',
    { timeout: 90_000 },
    async () => {
      const caseIds = await newCases('a', 12);
      const wf = await jiraWorkflow({ requests: 3, perSeconds: 1 });
      // Concurrency 4 against 3/s: some calls wait in process for their slot, others find it more
      // than a second away and their job is delayed.
      const worker = startDeliveryWorker(
        t.infra.queues,
        { ...t.deps.workflows.delivery, clock: () => new Date() },
        { logger: t.deps.logger, concurrency: 4 },
      );
      try {
        const got = await burst(wf.id, caseIds);
        expect(got.issues).toBe(caseIds.length);
        expect(got.requests.length).toBe(caseIds.length);
        expect(maxPerSecond(got.requests)).toBeLessThanOrEqual(3);
        const d = await deliveriesOf(wf.id);
        expect(d.map((x) => [x.status, x.attempts])).toEqual(caseIds.map(() => ['delivered', 1]));
      } finally {
        await worker.close();
      }
    },
  );

  it(
    'two worker processes, each with its own Redis client, share one schedule',
    { timeout: 90_000 },
    async () => {
      const caseIds = await newCases('b', 12);
      const wf = await jiraWorkflow({ requests: 4, perSeconds: 1 });
      const workers: WorkerHandle[] = [];
      for (let i = 0; i < 2; i++) {
        const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
        clients.push(redis);
        workers.push(
          startDeliveryWorker(
            t.infra.queues,
            {
              ...t.deps.workflows.delivery,
              clock: () => new Date(),
              pacer: redisPacer(redis, t.deps.config.redisPrefix),
            },
            { logger: t.deps.logger, concurrency: 4 },
          ),
        );
      }
      try {
        const got = await burst(wf.id, caseIds);
        expect(got.issues).toBe(caseIds.length);
        expect(maxPerSecond(got.requests)).toBeLessThanOrEqual(4);
        const d = await deliveriesOf(wf.id);
        expect(d.every((x) => x.status === 'delivered' && x.attempts === 1)).toBe(true);
      } finally {
        for (const w of workers) await w.close();
      }
    },
  );

  it('changes with PATCH, and a workflow without one shows its kind’s default', async () => {
    const res = await api('POST', '/api/v1/workflows', {
      name: 'defaults',
      target: { kind: 'github', owner: 'acme', repo: 'vulns', token: 'ghp_rl', apiUrl: jira.url },
    });
    const wf = res.json() as { id: string; target: { rateLimit: unknown } };
    expect(wf.target.rateLimit).toEqual({ requests: 60, perSeconds: 60 });
    const patched = await api('PATCH', `/api/v1/workflows/${wf.id}`, {
      rateLimit: { requests: 500, perSeconds: 3600 },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().target).toMatchObject({
      owner: 'acme',
      rateLimit: { requests: 500, perSeconds: 3600 },
    });
    const bad = await api('PATCH', `/api/v1/workflows/${wf.id}`, {
      rateLimit: { requests: 0, perSeconds: 1 },
    });
    expect(bad.statusCode).toBe(400);
    // Stored before the option existed: no rateLimit in the row, the default in the view.
    await t.infra.pool.query(`UPDATE workflows SET target = target - 'rateLimit' WHERE id = $1`, [wf.id]);
    expect((await api('GET', `/api/v1/workflows/${wf.id}`)).json().target.rateLimit).toEqual({
      requests: 60,
      perSeconds: 60,
    });
  });
});
