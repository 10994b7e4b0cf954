import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signUpWorkflowManager } from '../../helpers/test-app.js';
import {
  eventually,
  startScanApp,
  uploadScan,
  waitForScan,
  type ScanTestApp,
} from '../../helpers/scan-app.js';
import {
  startFakeJira,
  startFakeGithub,
  GITHUB_SECONDARY_LIMIT,
  isAdf,
  type FakeTracker,
} from '../../helpers/fake-providers/issue-trackers.js';
import { startScanIngestWorker } from '../../../src/workers/scan-ingest-worker.js';
import { requeueOrphans, startDeliveryWorker } from '../../../src/workers/delivery-worker.js';
import { createWorkflowTrigger } from '../../../src/domain/workflows/trigger.js';
import type { WorkerHandle } from '../../../src/jobs/queue-kit.js';
import type { Queue } from 'bullmq';
import { maintenanceRun } from '../../../src/app/workers.js';
import { DELIVERY_QUEUE, type DeliveryPayload } from '../../../src/jobs/workflow-delivery.js';
import { SCAN_INGEST_QUEUE } from '../../../src/jobs/scan-ingest.js';
import { casesChanged } from '../../helpers/case-changes.js';

/**
 * Deliveries end to end: an uploaded scan's matching cases become exactly one Jira (or GitHub)
 * issue each, through the real ingest worker, the trigger, the `deliveries` queue and fake
 * trackers on 127.0.0.1; retries on 429/5xx (Retry-After honoured), final failure on a 400 with
 * the target's message, a target down keeps deliveries pending, a crash between the remote
 * create and the local store still leaves one issue.
 */
const NESSUS = readFileSync('test/fixtures/scans/nessus/nessus_many_vuln.xml');
const AUTH = { email: 'bot@acme.test', token: 'jira-token-abc123', project: 'SEC' };
let t: ScanTestApp;
let session: Awaited<ReturnType<typeof signUpWorkflowManager>>;
let jira: FakeTracker;
let github: FakeTracker;
let ingest: { close(): Promise<void> };
let deliveries: WorkerHandle;
let crashOnce = false;

const api = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
  t.app.inject({
    method,
    url,
    headers: { 'x-api-key': session.key, ...(payload ? { 'content-type': 'application/json' } : {}) },
    ...(payload ? { payload: JSON.stringify(payload) } : {}),
  });

/** Records `event` for `ids` in a transaction of its own and queues the deliveries (the service's trigger). */
const changed = (ids: string[], event: Parameters<typeof casesChanged>[4] = 'case.updated') =>
  casesChanged(t.infra.pool, t.deps.workflows.trigger, session.workspaceId, ids, event);

async function createJiraWorkflow(rule: Record<string, unknown>, fields: Record<string, unknown> = {}) {
  const res = await api('POST', '/api/v1/workflows', {
    name: 'to Jira',
    target: { kind: 'jira', baseUrl: jira.url, email: AUTH.email, apiToken: AUTH.token, projectKey: 'SEC' },
    rule,
    fields: {
      summary: '{{case.title}} on {{case.asset}}',
      priority: { INFO: 'Low' },
      labels: ['vuln triage', '{{case.scanner}}'],
      ...fields,
    },
  });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; secret: string };
}

async function deliveriesOf(workflowId: string) {
  const res = await api('GET', `/api/v1/workflows/${workflowId}/deliveries?limit=200`);
  return res.json().data as {
    status: string;
    attempts: number;
    error: string | null;
    responseCode: number | null;
    nextAttemptAt: string | null;
    caseId: string;
  }[];
}

const settled = (workflowId: string, n: number, timeoutMs = 20_000) =>
  eventually(async () => {
    const d = await deliveriesOf(workflowId);
    return d.length >= n && d.every((x) => x.status !== 'pending');
  }, timeoutMs);

async function uploadAndWait(query = '?environment=PRODUCTION&asset=web1') {
  const res = await uploadScan(t.app, session.key, NESSUS, {}, query);
  expect(res.statusCode).toBe(202);
  const scanId = res.json().scanId as string;
  expect((await waitForScan(t.app, session.key, scanId)).status).toBe('completed');
  // The job triggers the workflows after the completion commits: wait for it to end, so a workflow
  // a test creates next never receives this scan's `case.created` deliveries.
  const ingestQueue = t.infra.queues.queue(SCAN_INGEST_QUEUE);
  expect(
    await eventually(async () => {
      const n = await ingestQueue.getJobCounts('waiting', 'active', 'delayed');
      return (n.waiting ?? 0) + (n.active ?? 0) + (n.delayed ?? 0) === 0;
    }, 10_000),
  ).toBe(true);
  return scanId;
}

async function caseIdsOf(scanId: string): Promise<string[]> {
  const res = await api('GET', `/api/v1/cases?scan=${scanId}&limit=200`);
  return (res.json().data as { id: string }[]).map((c) => c.id);
}

const disable = (id: string) => api('PATCH', `/api/v1/workflows/${id}`, { enabled: false });

beforeAll(async () => {
  t = await startScanApp({
    worker: false,
    env: { WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' },
  });
  session = await signUpWorkflowManager(t.app, { plan: 'trial' });
  jira = await startFakeJira(AUTH);
  github = await startFakeGithub({ token: 'ghp_token_xyz', owner: 'acme', repo: 'vulns' });
  ingest = startScanIngestWorker({
    queues: t.infra.queues,
    pool: t.infra.pool,
    logger: t.deps.logger,
    config: t.deps.config,
    storage: t.storage,
    batchSize: 100,
    afterScan: t.deps.workflows.trigger.scanCompleted,
  });
  deliveries = startDeliveryWorker(
    t.infra.queues,
    {
      ...t.deps.workflows.delivery,
      clock: () => new Date(),
      afterRemoteCreate: async () => {
        if (crashOnce) {
          crashOnce = false;
          throw new Error('worker killed between the remote create and the local store');
        }
      },
    },
    { logger: t.deps.logger, concurrency: 4, backoff: { baseMs: 50, maxMs: 400 } },
  );
});

// Each test's workflow alone is enabled: the trigger serves every enabled workflow of the workspace.
beforeEach(async () => {
  await t.infra.pool.query('UPDATE workflows SET enabled = false');
});

afterAll(async () => {
  await deliveries?.close();
  await ingest?.close();
  await jira?.close();
  await github?.close();
  await t?.close();
});

describe('deliveries to Jira', () => {
  it('an uploaded scan makes exactly one issue per matching case; a second upload of the same file makes none', async () => {
    const wf = await createJiraWorkflow({ severity: ['INFO'], environment: ['PRODUCTION'] });
    const none = await createJiraWorkflow({ severity: ['CRITICAL'] });
    const scanId = await uploadAndWait();
    const matching = (await api('GET', `/api/v1/cases?scan=${scanId}&severity=INFO&limit=200`)).json()
      .data as { id: string }[];
    expect(matching.length).toBeGreaterThan(0);
    expect(await settled(wf.id, matching.length)).toBe(true);
    expect(jira.issues).toHaveLength(matching.length);
    expect((await deliveriesOf(wf.id)).every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
    expect(await deliveriesOf(none.id)).toEqual([]);

    // The issue as Jira got it: ADF description, mapped priority, labels without spaces plus the marker.
    const issue = jira.issues[0]!;
    expect(isAdf(issue.fields.description)).toBe(true);
    expect(issue.fields.priority).toEqual({ name: 'Low' });
    expect(issue.fields.labels).toEqual(
      expect.arrayContaining(['vuln-triage', expect.stringMatching(/^vt-/)]),
    );
    expect(String(issue.fields.summary)).toMatch(/^.+ on \S+$/);
    const create = jira.requests.find((r) => r.method === 'POST' && r.path === '/rest/api/3/issue')!;
    expect(create.headers.authorization).toBe(
      `Basic ${Buffer.from(`${AUTH.email}:${AUTH.token}`).toString('base64')}`,
    );

    // The case shows its link.
    const detail = (await api('GET', `/api/v1/cases/${matching[0]!.id}`)).json();
    expect(detail.links).toEqual([
      expect.objectContaining({
        workflowId: wf.id,
        kind: 'jira',
        externalId: expect.stringMatching(/^SEC-\d+$/),
        state: 'open',
      }),
    ]);

    await uploadAndWait();
    await new Promise((r) => setTimeout(r, 500));
    expect(jira.issues).toHaveLength(matching.length);
    expect(await deliveriesOf(wf.id)).toHaveLength(matching.length);
    await disable(wf.id);
    await disable(none.id);
  });

  it('a rule on priority selects, in SQL, only the cases whose current triage has that priority', async () => {
    const wf = await createJiraWorkflow({ priority: ['CRITICAL'], status: ['open'] });
    const scanId = await uploadAndWait('?asset=prio');
    const ids = await caseIdsOf(scanId);
    await t.infra.pool.query(
      `UPDATE cases SET priority = 'CRITICAL', priority_rank = 0, recommended_action = 'PATCH_IMMEDIATELY',
         reasoning = 'test', confidence_score = 0.9, model = 'local:test', triaged_at = now(),
         policy_version = 'p1', triaged_kev = false
       WHERE id = $1`,
      [ids[0]],
    );
    const before = jira.issues.length;
    expect(await changed(ids, 'case.triaged')).toBe(1);
    expect(await settled(wf.id, 1)).toBe(true);
    expect(jira.issues.length - before).toBe(1);
    expect((await deliveriesOf(wf.id))[0]!.caseId).toBe(ids[0]);
    await disable(wf.id);
    await t.infra.pool.query(
      `UPDATE cases SET priority = NULL, priority_rank = 5, recommended_action = NULL, reasoning = NULL,
         confidence_score = NULL, model = NULL, triaged_at = NULL, policy_version = NULL, triaged_kev = NULL
       WHERE id = $1`,
      [ids[0]],
    );
  });

  it('a status change updates and transitions the same issue; reopening moves it back', async () => {
    const wf = await createJiraWorkflow({});
    const scanId = await uploadAndWait('?environment=STAGING&asset=web2');
    const [caseId] = await caseIdsOf(scanId);
    await changed([caseId!]);
    expect(await settled(wf.id, 1)).toBe(true);
    const before = jira.issues.length;
    const patched = await api('PATCH', `/api/v1/cases/${caseId}`, { status: 'resolved' });
    expect(patched.statusCode).toBe(200);
    expect(await settled(wf.id, 2)).toBe(true);
    expect(jira.issues).toHaveLength(before);
    const link = (await api('GET', `/api/v1/cases/${caseId}`))
      .json()
      .links.find((l: { workflowId: string }) => l.workflowId === wf.id);
    const issue = jira.issues.find((i) => i.key === link.externalId)!;
    expect(issue.status).toBe('Done');
    expect(link.state).toBe('closed');

    await api('PATCH', `/api/v1/cases/${caseId}`, { status: 'open' });
    expect(await settled(wf.id, 3)).toBe(true);
    expect(issue.status).toBe('To Do');
    expect(jira.issues).toHaveLength(before);
    await disable(wf.id);
  });

  it('exactly one issue per case even when the trigger fires twice at once', async () => {
    const wf = await createJiraWorkflow({});
    const scanId = await uploadAndWait('?asset=web3');
    const ids = await caseIdsOf(scanId);
    const before = jira.issues.length;
    await Promise.all([changed(ids), changed(ids)]);
    expect(await settled(wf.id, ids.length * 2)).toBe(true);
    expect(jira.issues.length - before).toBe(ids.length);
    await disable(wf.id);
  });

  it('a crash between the remote create and the local store: the retry finds the issue by its marker', async () => {
    const wf = await createJiraWorkflow({});
    const scanId = await uploadAndWait('?asset=web4');
    const [caseId] = await caseIdsOf(scanId);
    const before = jira.issues.length;
    crashOnce = true;
    await changed([caseId!]);
    expect(await settled(wf.id, 1)).toBe(true);
    expect(jira.issues.length - before).toBe(1);
    // The crashed attempt recorded nothing; the retry searched for the marker and stored the issue.
    expect((await deliveriesOf(wf.id))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(jira.requests.filter((r) => r.path === '/rest/api/3/search/jql')).toHaveLength(1);
    await disable(wf.id);
  });

  it('retries 429 (after Retry-After) and 500 × 3, then delivers', async () => {
    const wf = await createJiraWorkflow({});
    const scanId = await uploadAndWait('?asset=web5');
    const [a, b] = await caseIdsOf(scanId);
    jira.failNext(
      [
        {
          status: 429,
          headers: { 'retry-after': '1', 'x-ratelimit-limit': '100' },
          body: { errorMessages: ['Rate limit exceeded.'] },
        },
      ],
      /\/rest\/api\/3\/issue$/,
    );
    const started = Date.now();
    await changed([a!]);
    expect(await settled(wf.id, 1)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    jira.failNext(
      Array.from({ length: 3 }, () => ({ status: 500, body: { errorMessages: ['Internal server error'] } })),
      /\/rest\/api\/3\/issue$/,
    );
    await changed([b!]);
    expect(await settled(wf.id, 2)).toBe(true);
    const d = await deliveriesOf(wf.id);
    expect(d.map((x) => [x.status, x.attempts])).toEqual([
      ['delivered', 4],
      ['delivered', 2],
    ]);
    await disable(wf.id);
  });

  it("a 400 fails the delivery at once with Jira's message, shown on the delivery and the workflow", async () => {
    const wf = await createJiraWorkflow({});
    const scanId = await uploadAndWait('?asset=web6');
    const [caseId] = await caseIdsOf(scanId);
    jira.failNext(
      [
        {
          status: 400,
          body: {
            errorMessages: [],
            errors: {
              customfield_10010:
                "Field 'customfield_10010' cannot be set. It is not on the appropriate screen, or unknown.",
            },
          },
        },
      ],
      /\/rest\/api\/3\/issue$/,
    );
    await changed([caseId!]);
    expect(await settled(wf.id, 1)).toBe(true);
    const message =
      "HTTP 400: customfield_10010: Field 'customfield_10010' cannot be set. It is not on the appropriate screen, or unknown.";
    expect((await deliveriesOf(wf.id))[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      responseCode: 400,
      error: message,
    });
    const view = (await api('GET', `/api/v1/workflows/${wf.id}`)).json();
    expect(view).toMatchObject({ lastDeliveryStatus: 'failed', lastError: message });
    await disable(wf.id);
  });

  it('a target down for the whole test: deliveries stay pending with their next attempt time, none lost', async () => {
    const wf = await createJiraWorkflow({});
    const scanId = await uploadAndWait('?asset=web7');
    const ids = await caseIdsOf(scanId);
    jira.down = true;
    try {
      await changed(ids);
      expect(
        await eventually(async () => {
          const d = await deliveriesOf(wf.id);
          return d.length === ids.length && d.every((x) => x.attempts >= 2);
        }, 15_000),
      ).toBe(true);
      for (const d of await deliveriesOf(wf.id)) {
        expect(d).toMatchObject({ status: 'pending', responseCode: null, error: 'network_error' });
        expect(Date.parse(d.nextAttemptAt!)).toBeGreaterThan(Date.now() - 1000);
      }
    } finally {
      jira.down = false;
      await disable(wf.id);
    }
  });
});

describe('orphaned deliveries', () => {
  it('a delivery recorded but never queued (a crash before the enqueue) is queued again and delivered', async () => {
    const scanId = await uploadAndWait('?asset=orphan');
    const [caseId] = await caseIdsOf(scanId);
    const wf = await createJiraWorkflow({}); // after the upload: its only delivery is the one below
    const lost = createWorkflowTrigger({ pool: t.infra.pool, enqueue: async () => undefined });
    expect(await casesChanged(t.infra.pool, lost, session.workspaceId, [caseId!], 'case.updated')).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    expect((await deliveriesOf(wf.id))[0]).toMatchObject({ status: 'pending', attempts: 0 });
    expect(await requeueOrphans(t.infra.queues, { pool: t.infra.pool }, 0)).toBe(1);
    expect(await settled(wf.id, 1)).toBe(true);
    expect((await deliveriesOf(wf.id))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    await disable(wf.id);
  });
});

describe('connections', () => {
  it('a delivery holds no pooled connection while it waits on the target', async () => {
    const scanId = await uploadAndWait('?asset=slow-jira');
    const ids = (await caseIdsOf(scanId)).slice(0, 4);
    expect(ids).toHaveLength(4);
    const wf = await createJiraWorkflow({}); // after the upload: only the four deliveries below
    const pool = t.infra.pool;
    const creates = () =>
      jira.requests.filter((r) => r.method === 'POST' && r.path === '/rest/api/3/issue').length;
    const before = creates();
    jira.latencyMs = 2_000;
    const samples: number[] = [];
    try {
      await changed(ids);
      // Four creates on their way (the worker runs four at once), each answered 2 s later.
      expect(await eventually(async () => creates() - before === 4, 10_000)).toBe(true);
      for (let i = 0; i < 20; i++) {
        samples.push(pool.totalCount - pool.idleCount);
        await new Promise((r) => setTimeout(r, 25));
      }
    } finally {
      jira.latencyMs = 0;
    }
    // Held across the call (as the advisory lock did), every sample would be 4. A stray statement
    // of another test's leftover retries may take one for a moment: the typical sample is 0.
    samples.sort((a, b) => a - b);
    expect(samples[Math.floor(samples.length / 2)]).toBe(0);
    expect(samples.at(-1)).toBeLessThan(4);
    expect(await settled(wf.id, 4)).toBe(true);
    expect((await deliveriesOf(wf.id)).every((d) => d.status === 'delivered')).toBe(true);
    expect(creates() - before).toBe(4);
    await disable(wf.id);
  });
});

describe('lost deliveries', () => {
  it('the periodic maintenance run queues again a delivery whose job the queue lost, once', async () => {
    const scanId = await uploadAndWait('?asset=lost-job');
    const [caseId] = await caseIdsOf(scanId);
    const wf = await createJiraWorkflow({}); // after the upload: its only delivery is the one below
    const queued: string[] = [];
    const queue = t.infra.queues.queue<DeliveryPayload>(DELIVERY_QUEUE);
    // Queued as the trigger queues it, but held an hour: a job the queue still has, not yet run.
    const held = createWorkflowTrigger({
      pool: t.infra.pool,
      enqueue: async (workflowId, ids) => {
        queued.push(...ids);
        for (const id of ids)
          await queue.add('deliver', { deliveryId: id, workflowId }, { jobId: id, delay: 3_600_000 });
      },
    });
    expect(await casesChanged(t.infra.pool, held, session.workspaceId, [caseId!], 'case.updated')).toBe(1);
    const [pending] = await deliveriesOf(wf.id);
    const deliveryId = queued[0]!;
    expect(pending).toMatchObject({ status: 'pending', attempts: 0 });
    // Old enough to count as lost if its job were gone.
    await t.infra.pool.query(
      `UPDATE workflow_deliveries SET created_at = now() - interval '10 minutes' WHERE id = $1`,
      [deliveryId],
    );
    const maintenance = maintenanceRun(t.deps.config, t.infra, t.deps);
    const issuesBefore = jira.issues.length;

    // The job is still there: the run re-adds it by id, which the queue ignores (no second job).
    expect((await maintenance()).deliveriesRequeued).toBeGreaterThanOrEqual(1);
    expect(await queue.getJobState(deliveryId)).toBe('delayed');
    await new Promise((r) => setTimeout(r, 500));
    expect((await deliveriesOf(wf.id))[0]).toMatchObject({ status: 'pending', attempts: 0 });
    expect(jira.issues.length).toBe(issuesBefore);

    // The queue loses the job (a flush, a failover to an empty replica): one run brings it back.
    // (`remove` is the queue's own, on either backend: the kit's handle does not offer it.)
    await (queue as unknown as Pick<Queue, 'remove'>).remove(deliveryId);
    expect(await queue.getJobState(deliveryId)).toBe('unknown');
    expect((await maintenance()).deliveriesRequeued).toBeGreaterThanOrEqual(1);
    expect(await settled(wf.id, 1)).toBe(true);
    expect((await deliveriesOf(wf.id))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(jira.issues.length).toBe(issuesBefore + 1);

    // Delivered: a later run has nothing of it to queue again.
    await maintenance();
    await new Promise((r) => setTimeout(r, 300));
    expect(jira.issues.length).toBe(issuesBefore + 1);
    await disable(wf.id);
  });
});

describe('deliveries to a generic webhook', () => {
  it("sends one case's events signed and in order, a retried one with the same webhook-id", async () => {
    const got: { headers: Record<string, string>; body: string }[] = [];
    let answers = [503];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        got.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString() });
        res.writeHead(answers.shift() ?? 204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;
      const scanId = await uploadAndWait('?asset=hook1');
      const [caseId] = await caseIdsOf(scanId);
      const res = await api('POST', '/api/v1/workflows', { name: 'hook', target: { kind: 'webhook', url } });
      const wf = res.json() as { id: string; secret: string };
      answers = [503];
      for (const event of ['case.updated', 'case.triaged', 'case.status_changed'] as const)
        await changed([caseId!], event);
      expect(await settled(wf.id, 3)).toBe(true);
      const events = got.map(
        (g) =>
          new Webhook(wf.secret).verify(g.body, g.headers) as {
            type: string;
            id: string;
            data: { id: string };
          },
      );
      // The first answer was 503: the first event went again (same id) before the others.
      expect(events.map((e) => e.type)).toEqual([
        'case.updated',
        'case.updated',
        'case.triaged',
        'case.status_changed',
      ]);
      expect(got[0]!.headers['webhook-id']).toBe(got[1]!.headers['webhook-id']);
      expect(new Set(got.map((g) => g.headers['webhook-id'])).size).toBe(3);
      expect(events.every((e) => e.data.id === caseId)).toBe(true);
      await disable(wf.id);
    } finally {
      await new Promise((r) => receiver.close(r));
    }
  });
});

describe('deliveries to GitHub', () => {
  it('creates one issue with the hidden marker, waits out the secondary rate limit, closes it as not planned', async () => {
    const scanId = await uploadAndWait('?asset=gh1');
    const [caseId] = await caseIdsOf(scanId);
    // After the upload: the workflow's only delivery is the one below.
    const res = await api('POST', '/api/v1/workflows', {
      name: 'to GitHub',
      target: { kind: 'github', owner: 'acme', repo: 'vulns', token: 'ghp_token_xyz', apiUrl: github.url },
      fields: {
        summary: '[{{case.severity}}] {{case.title}}',
        priority: { INFO: 'p4' },
        labels: ['security'],
      },
    });
    expect(res.statusCode).toBe(201);
    const wf = res.json() as { id: string };
    const before = github.issues.length;
    github.failNext([GITHUB_SECONDARY_LIMIT], /\/issues$/);
    await changed([caseId!]);
    expect(await settled(wf.id, 1)).toBe(true);
    expect(github.issues.length - before).toBe(1);
    const issue = github.issues.at(-1)!;
    expect(issue.fields.labels).toEqual(['security', 'p4']);
    expect(String(issue.fields.body)).toMatch(/<!-- vt-[0-9a-f-]+ -->$/);
    expect((await deliveriesOf(wf.id))[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    const post = github.requests.find((r) => r.method === 'POST')!;
    expect(post.headers).toMatchObject({
      authorization: 'Bearer ghp_token_xyz',
      'x-github-api-version': '2022-11-28',
    });

    await api('PATCH', `/api/v1/cases/${caseId}`, {
      status: 'risk_accepted',
      note: 'not ours to fix',
      expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    });
    expect(await settled(wf.id, 2)).toBe(true);
    expect(issue).toMatchObject({ state: 'closed', stateReason: 'not_planned' });
    expect(github.issues.length - before).toBe(1);
    await disable(wf.id);
  });

  it('a crash between the remote create and the local store, while the search index lags: the retry finds the issue among the newest listed, and creates no second', async () => {
    const scanId = await uploadAndWait('?asset=gh-crash');
    const [caseId] = await caseIdsOf(scanId);
    const res = await api('POST', '/api/v1/workflows', {
      name: 'to GitHub, crash',
      target: { kind: 'github', owner: 'acme', repo: 'vulns', token: 'ghp_token_xyz', apiUrl: github.url },
    });
    expect(res.statusCode).toBe(201);
    const wf = res.json() as { id: string };
    const before = github.issues.length;
    const seen = github.requests.length;
    github.searchLag = true;
    crashOnce = true;
    try {
      await changed([caseId!]);
      expect(await settled(wf.id, 1)).toBe(true);
    } finally {
      github.searchLag = false;
    }
    expect(github.issues.length - before).toBe(1);
    expect((await deliveriesOf(wf.id))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    // The retry's one lookup: the newest issues listed (the lagging search was not needed).
    const lookups = github.requests.slice(seen).filter((r) => r.method === 'GET');
    expect(lookups.map((r) => r.path.split('?')[0])).toEqual(['/repos/acme/vulns/issues']);
    await disable(wf.id);
  });

  it('no token or secret in any log line', () => {
    const all = t.logs.join('\n');
    expect(all).not.toContain('ghp_token_xyz');
    expect(all).not.toContain(AUTH.token);
    expect(all).not.toContain(Buffer.from(`${AUTH.email}:${AUTH.token}`).toString('base64'));
  });
});
