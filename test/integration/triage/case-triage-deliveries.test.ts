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
import { pollBatch, startTriageTestWorker } from '../../helpers/triage-setup.js';
import { startDeliveryWorker } from '../../../src/workers/delivery-worker.js';
import { DELIVERY_QUEUE } from '../../../src/jobs/workflow-delivery.js';
import type { WorkerHandle } from '../../../src/jobs/queue-kit.js';

/**
 * A case's triage answer records its `case.triaged` deliveries with it
 * (docs/workflows.md#when-deliveries-happen): `POST /api/v1/cases/:id/triage` in the answer's
 * transaction, a case batch in each group commit of its items. A crash there leaves no case
 * triaged without its delivery; deliveries never queued after the commit (the process died
 * there) are delivered by the maintenance sweep, once (and the ones of the crashes with them).
 */
let t: ScanTestApp;
let owner: Awaited<ReturnType<typeof signUpWorkflowManager>>;
let caseIds: string[];
let hookId: string;
let receiver: HookReceiver;
const workers: WorkerHandle[] = [];

const post = (url: string, payload?: unknown) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: { 'x-api-key': owner.key, ...(payload ? { 'content-type': 'application/json' } : {}) },
    ...(payload ? { payload: JSON.stringify(payload) } : {}),
  });

/** Whether each case holds a triage, and how many `case.triaged` deliveries it has. */
async function triageOf(ids: string[]) {
  const { rows } = await t.infra.pool.query<{ id: string; triaged: boolean; deliveries: number }>(
    `SELECT c.id, c.triaged_at IS NOT NULL AS triaged,
            (SELECT count(*) FROM workflow_deliveries d
              WHERE d.case_id = c.id AND d.workflow_id = $2 AND d.event = 'case.triaged')::int AS deliveries
       FROM cases c WHERE c.id = ANY($1::uuid[])`,
    [ids, hookId],
  );
  return ids.map((id) => {
    const r = rows.find((row) => row.id === id)!;
    return { triaged: r.triaged, deliveries: r.deliveries };
  });
}

const eventsFor = (caseId: string) => receiver.events.filter((e) => e.data.id === caseId);

/** A case batch over `ids`, run to its end by the triage worker. */
async function triageBatch(ids: string[]) {
  const res = await post('/api/v1/cases/triage', { caseIds: ids });
  expect(res.statusCode, res.body).toBe(202);
  return pollBatch(t, owner.key, res.json().batchId as string);
}

beforeAll(async () => {
  t = await startScanApp({
    env: { WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' },
  });
  owner = await signUpWorkflowManager(t.app, { plan: 'trial' });
  const findings = Array.from({ length: 8 }, (_, i) => ({
    title: `Finding ${i}`,
    severity: i % 2 ? 'HIGH' : 'MEDIUM',
    cveIds: [`CVE-2099-5200${i}`],
    location: `app/${i}.ts:1`,
  }));
  const up = await uploadScan(
    t.app,
    owner.key,
    Buffer.from(findings.map((f) => JSON.stringify(f)).join('\n')),
    { 'content-type': 'application/x-ndjson' },
    '?asset=billing-api',
  );
  expect(up.statusCode, up.body).toBe(202);
  expect((await waitForScan(t.app, owner.key, up.json().scanId)).status).toBe('completed');
  const { rows } = await t.infra.pool.query<{ id: string }>(
    `SELECT id FROM cases WHERE workspace_id = $1 ORDER BY title`,
    [owner.workspaceId],
  );
  caseIds = rows.map((r) => r.id);
  expect(caseIds).toHaveLength(8);
  receiver = await startHookReceiver();
  // Created after the upload: its only deliveries are the triage's.
  const wf = await post('/api/v1/workflows', {
    name: 'events',
    target: { kind: 'webhook', url: receiver.url },
  });
  expect(wf.statusCode, wf.body).toBe(201);
  hookId = wf.json().id;
  workers.push(startTriageTestWorker(t, {}, 4));
}, 120_000);

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  for (const w of workers) await w.close();
  await receiver?.close();
  await t?.close();
});

describe('a crash while a triage answer is stored', () => {
  it('POST /api/v1/cases/:id/triage stores the answer with its case.triaged delivery, or neither', async () => {
    const caseId = caseIds[0]!;
    const res = (await cutAtOutbox(t.infra.pool, () => post(`/api/v1/cases/${caseId}/triage`))) as {
      statusCode: number;
    };
    const [after] = await triageOf([caseId]);
    if (after!.triaged) expect(after).toEqual({ triaged: true, deliveries: 1 });
    else {
      expect(res.statusCode).toBe(503);
      expect(after).toEqual({ triaged: false, deliveries: 0 });
    }
  });

  it('a case batch stores each group of answers with their deliveries: no case triaged without one', async () => {
    const ids = caseIds.slice(1, 4);
    const batch = (await cutAtOutbox(t.infra.pool, () => triageBatch(ids))) as { status: string };
    expect(batch.status).toBe('completed');
    expect(await triageOf(ids)).toEqual(ids.map(() => ({ triaged: true, deliveries: 1 })));
  });
});

describe('case.triaged deliveries not queued after the commit (the process died there)', () => {
  it('are delivered by the maintenance sweep, once, for one case and for a batch', async () => {
    const one = caseIds[4]!;
    const many = caseIds.slice(5, 8);
    vi.spyOn(t.deps.workflows.trigger, 'queueRecorded').mockResolvedValue(0);
    expect((await post(`/api/v1/cases/${one}/triage`)).statusCode).toBe(200);
    expect((await triageBatch(many)).status).toBe('completed');
    vi.restoreAllMocks();
    const ids = [one, ...many];
    expect(await triageOf(ids)).toEqual(ids.map(() => ({ triaged: true, deliveries: 1 })));
    const { rows } = await t.infra.pool.query<{ id: string; status: string }>(
      `SELECT id, status FROM workflow_deliveries WHERE case_id = ANY($1::uuid[])`,
      [ids],
    );
    const queue = t.infra.queues.queue(DELIVERY_QUEUE);
    for (const r of rows) {
      expect(r.status).toBe('pending');
      expect(await queue.getJobState(r.id)).toBe('unknown');
    }

    // Only now a delivery worker: while the tests above held the outbox, none wrote to it.
    workers.push(
      startDeliveryWorker(
        t.infra.queues,
        { ...t.deps.workflows.delivery, clock: () => new Date() },
        { logger: t.deps.logger, concurrency: 2 },
      ),
    );
    expect(await t.deps.workflows.requeueLost(0)).toBeGreaterThanOrEqual(ids.length);
    expect(await eventually(async () => ids.every((id) => eventsFor(id).length > 0), 20_000)).toBe(true);
    // The sweep again while they are delivered or being delivered: nothing is sent twice.
    await t.deps.workflows.requeueLost(0);
    expect(
      await eventually(async () => {
        const n = await queue.getJobCounts('waiting', 'active', 'delayed');
        return (n.waiting ?? 0) + (n.active ?? 0) + (n.delayed ?? 0) === 0;
      }, 20_000),
    ).toBe(true);
    for (const id of ids) expect(eventsFor(id).map((e) => e.type)).toEqual(['case.triaged']);
  });
});
