import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { signUpWorkflowManager } from '../../helpers/test-app.js';
import {
  eventually,
  startScanApp,
  uploadScan,
  waitForScan,
  type ScanTestApp,
} from '../../helpers/scan-app.js';
import { cutAtOutbox, startHookReceiver, type HookReceiver } from '../../helpers/outbox-cut.js';
import { hubSignature } from '../../../src/domain/workflows/signing.js';
import { startDeliveryWorker } from '../../../src/workers/delivery-worker.js';
import { DELIVERY_QUEUE } from '../../../src/jobs/workflow-delivery.js';
import type { WorkerHandle } from '../../../src/jobs/queue-kit.js';

/**
 * Status flowing back records its deliveries with the change (docs/workflows.md#when-deliveries-happen):
 * a GitHub issue closed moves its case, sets the link's remote state and records the other
 * workflows' `case.status_changed` deliveries in one transaction. A crash inside it leaves all or
 * nothing (and GitHub's retry of the same delivery applies it); deliveries never queued after the
 * commit are delivered by the maintenance sweep, once; the workflow whose tracker told us is
 * never told back.
 */
let t: ScanTestApp;
let owner: Awaited<ReturnType<typeof signUpWorkflowManager>>;
let caseIds: string[];
let gh: { id: string; secret: string };
let hook: { id: string };
let receiver: HookReceiver;
let worker: WorkerHandle;

const api = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
  t.app.inject({
    method,
    url,
    headers: { 'x-api-key': owner.key, ...(payload ? { 'content-type': 'application/json' } : {}) },
    ...(payload ? { payload: JSON.stringify(payload) } : {}),
  });

/** GitHub's `issues` `closed` event for issue `number`, signed with the GitHub workflow's secret. */
function issueClosed(number: number, deliveryId: string) {
  const body = JSON.stringify({
    action: 'closed',
    issue: { number, state: 'closed', state_reason: 'completed', updated_at: t.clock().toISOString() },
    repository: { full_name: 'acme/vulns' },
  });
  return t.app.inject({
    method: 'POST',
    url: `/api/hooks/github/${gh.id}`,
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'issues',
      'x-github-delivery': deliveryId,
      'x-hub-signature-256': hubSignature(gh.secret, body),
    },
    payload: body,
  });
}

/** The case's status, its GitHub link's remote state, and the deliveries of its change per workflow. */
async function stateOf(caseId: string) {
  const { rows } = await t.infra.pool.query<{
    status: string;
    remote: string;
    to_hook: number;
    to_github: number;
  }>(
    `SELECT c.status, l.remote_state AS remote,
            (SELECT count(*) FROM workflow_deliveries d
              WHERE d.case_id = c.id AND d.workflow_id = $2 AND d.event = 'case.status_changed')::int AS to_hook,
            (SELECT count(*) FROM workflow_deliveries d WHERE d.case_id = c.id AND d.workflow_id = $3)::int AS to_github
       FROM cases c JOIN workflow_links l ON l.case_id = c.id AND l.workflow_id = $3
      WHERE c.id = $1`,
    [caseId, hook.id, gh.id],
  );
  return rows[0]!;
}

const eventsFor = (caseId: string) => receiver.events.filter((e) => e.data.id === caseId);

/** Until every delivery job has run: a second job for a delivery would have run by then. */
const deliveryQueueDrained = () =>
  eventually(async () => {
    const n = await t.infra.queues.queue(DELIVERY_QUEUE).getJobCounts('waiting', 'active', 'delayed');
    return (n.waiting ?? 0) + (n.active ?? 0) + (n.delayed ?? 0) === 0;
  }, 20_000);

beforeAll(async () => {
  t = await startScanApp({
    env: { WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' },
  });
  owner = await signUpWorkflowManager(t.app, { plan: 'trial' });
  const up = await uploadScan(
    t.app,
    owner.key,
    readFileSync('test/fixtures/scans/nessus/nessus_many_vuln.xml'),
  );
  expect((await waitForScan(t.app, owner.key, up.json().scanId)).status).toBe('completed');
  caseIds = ((await api('GET', '/api/v1/cases?limit=20&status=open')).json().data as { id: string }[]).map(
    (c) => c.id,
  );
  expect(caseIds.length).toBeGreaterThanOrEqual(3);
  receiver = await startHookReceiver();
  // Both created after the upload: their only deliveries are the ones the tests make.
  const ghRes = await api('POST', '/api/v1/workflows', {
    name: 'issues',
    target: { kind: 'github', owner: 'acme', repo: 'vulns', token: 'ghp_x' },
  });
  expect(ghRes.statusCode, ghRes.body).toBe(201);
  gh = ghRes.json();
  const hookRes = await api('POST', '/api/v1/workflows', {
    name: 'events',
    target: { kind: 'webhook', url: receiver.url },
  });
  expect(hookRes.statusCode, hookRes.body).toBe(201);
  hook = hookRes.json();
  for (const [i, caseId] of caseIds.slice(0, 3).entries())
    await t.infra.pool.query(
      `INSERT INTO workflow_links (workflow_id, case_id, workspace_id, marker, external_id, url)
       VALUES ($1, $2, $3, $4, $5, 'https://github.com/acme/vulns/issues/1')`,
      [gh.id, caseId, owner.workspaceId, `vt-${gh.id}-${i}`, String(11 + i)],
    );
  worker = startDeliveryWorker(
    t.infra.queues,
    { ...t.deps.workflows.delivery, clock: () => new Date() },
    { logger: t.deps.logger, concurrency: 2 },
  );
}, 120_000);

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  await worker?.close();
  await receiver?.close();
  await t?.close();
});

describe('a tracker closing an issue', () => {
  it('a crash inside the change leaves the status, the link and the deliveries all or none; the retry applies it', async () => {
    const caseId = caseIds[0]!;
    await cutAtOutbox(t.infra.pool, () => issueClosed(11, 'crash-1'));
    const after = await stateOf(caseId);
    if (after.status === 'resolved') {
      expect(after).toEqual({ status: 'resolved', remote: 'closed', to_hook: 1, to_github: 0 });
    } else {
      // Nothing of it stored, the delivery id included: GitHub's retry of it applies the change.
      expect(after).toEqual({ status: 'open', remote: 'open', to_hook: 0, to_github: 0 });
      const retried = await issueClosed(11, 'crash-1');
      expect(retried.json()).toMatchObject({ applied: true, caseId, status: 'resolved' });
      expect(await stateOf(caseId)).toEqual({
        status: 'resolved',
        remote: 'closed',
        to_hook: 1,
        to_github: 0,
      });
    }
    expect(await eventually(async () => eventsFor(caseId).length > 0, 20_000)).toBe(true);
    expect(eventsFor(caseId).map((e) => e.type)).toEqual(['case.status_changed']);
  });

  it('deliveries not queued after the commit (the process died there) are delivered by the sweep, once', async () => {
    const caseId = caseIds[1]!;
    // The after-commit step never happens: what the change recorded is left as a crash leaves it.
    vi.spyOn(t.deps.workflows.trigger, 'queueRecorded').mockResolvedValue(0);
    const res = await issueClosed(12, 'lost-1');
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ applied: true, caseId, status: 'resolved' });
    vi.restoreAllMocks();
    expect(await stateOf(caseId)).toEqual({ status: 'resolved', remote: 'closed', to_hook: 1, to_github: 0 });
    const { rows } = await t.infra.pool.query<{ id: string; status: string }>(
      `SELECT id, status FROM workflow_deliveries WHERE case_id = $1`,
      [caseId],
    );
    expect(rows.map((r) => r.status)).toEqual(['pending']);
    const queue = t.infra.queues.queue(DELIVERY_QUEUE);
    expect(await queue.getJobState(rows[0]!.id)).toBe('unknown');

    expect(await t.deps.workflows.requeueLost(0)).toBeGreaterThanOrEqual(1);
    expect(await eventually(async () => eventsFor(caseId).length > 0, 20_000)).toBe(true);
    // The sweep again, and the same deliveries queued again: nothing is sent twice.
    await t.deps.workflows.requeueLost(0);
    await t.deps.workflows.trigger.queueRecorded(new Map([[hook.id, [rows[0]!.id]]]));
    expect(await deliveryQueueDrained()).toBe(true);
    expect(eventsFor(caseId).map((e) => e.type)).toEqual(['case.status_changed']);
    expect((await stateOf(caseId)).to_github).toBe(0);
  });

  it('queued after the commit and swept at once: delivered once, never to the workflow that sent it', async () => {
    const caseId = caseIds[2]!;
    const res = await issueClosed(13, 'both-1');
    expect(res.json()).toMatchObject({ applied: true, caseId, status: 'resolved' });
    await t.deps.workflows.requeueLost(0);
    expect(await eventually(async () => eventsFor(caseId).length > 0, 20_000)).toBe(true);
    expect(await deliveryQueueDrained()).toBe(true);
    expect(eventsFor(caseId).map((e) => e.type)).toEqual(['case.status_changed']);
    const { rows } = await t.infra.pool.query<{ workflow_id: string; status: string; attempts: number }>(
      `SELECT workflow_id, status, attempts FROM workflow_deliveries WHERE case_id = $1`,
      [caseId],
    );
    expect(rows).toEqual([{ workflow_id: hook.id, status: 'delivered', attempts: 1 }]);
  });
});
