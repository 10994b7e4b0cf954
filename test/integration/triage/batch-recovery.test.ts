import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { createBatch, finishBatch } from '../../../src/domain/triage/batch-store.js';
import {
  failBatchItem,
  processBatchItem,
  type BatchProcessorDeps,
} from '../../../src/domain/triage/batch-processor.js';
import { sealSecret } from '../../../src/domain/keys/key-secrets.js';
import type { TriageRequest } from '../../../src/domain/triage-engine/types.js';
import { failStuckBatches } from '../../../src/domain/triage/batch-sweep.js';
import { runMaintenance } from '../../../src/domain/maintenance.js';
import { TRIAGE_QUEUE } from '../../../src/jobs/triage-batch.js';

/**
 * What a batch's last job leaves undone when its process dies, and items whose jobs fail for
 * good: the batch still finishes, its quota reservation is settled in the same statement
 * (answered items used, the rest back), and its webhook is delivered at least once.
 */
let t: TestApp;
let ws: { workspaceId: string; keyId: string };
const deliveries: { url: string; payload: Record<string, unknown> }[] = [];
let deps: BatchProcessorDeps;

beforeAll(async () => {
  t = await startTestApp();
  ws = await signUp(t.app);
  deps = {
    db: t.infra.pool,
    triage: t.deps.triage,
    pepper: t.infra.pepper,
    clock: t.clock,
    deliver: async (url, _key, payload) => {
      deliveries.push({ url, payload: payload as Record<string, unknown> });
      return 'delivered';
    },
  };
});
afterAll(async () => t.close());

const items: TriageRequest[] = [
  { title: 'Weak TLS cipher', severity: 'LOW' } as TriageRequest,
  { title: 'Log4Shell', severity: 'CRITICAL', cveIds: ['CVE-2021-44228'] } as TriageRequest,
];

async function batch(): Promise<string> {
  const reserved = await t.deps.quota.reserve(ws.workspaceId, items.length, 1_000, 60_000);
  if (!reserved.ok) throw new Error('no quota');
  return createBatch(t.infra.pool, {
    workspaceId: ws.workspaceId,
    keyId: ws.keyId,
    items,
    reservationId: reserved.reservation.id,
    webhookUrl: 'https://hooks.example.com/triage',
    webhookKeySealed: sealSecret(t.infra.pepper, 'k'.repeat(64)),
    at: t.clock(),
  });
}

/** Stores an item's answer the way its job does, without anything that follows. */
async function storeOnly(batchId: string, index: number) {
  const caller = {
    workspaceId: ws.workspaceId,
    keyId: ws.keyId,
    requestId: `batch:${batchId}:${index}`,
    aiCallLimit: 0,
  };
  const request = items[index]!;
  return t.deps.triage.runBatchItem(caller, request, { batchId, index });
}

async function state(batchId: string) {
  const b = await t.infra.pool.query(
    `SELECT status, completed, failed, finished_at IS NOT NULL AS finished, webhook_status FROM triage_batches WHERE id = $1`,
    [batchId],
  );
  const q = await t.infra.pool.query(
    `SELECT used, reserved, (SELECT count(*)::int FROM quota_reservations WHERE workspace_id = $1) AS reservations
       FROM ai_call_quota WHERE workspace_id = $1`,
    [ws.workspaceId],
  );
  return { ...b.rows[0], quota: q.rows[0] };
}

function deliveredFor(batchId: string) {
  return deliveries.filter((d) => d.payload.batchId === batchId);
}

describe('batch recovery', () => {
  it('a job run again after its process died having stored the last item finishes the batch', async () => {
    const id = await batch();
    const before = (await state(id)).quota; // this workspace's counters, the batch reserved
    await storeOnly(id, 0);
    expect(await storeOnly(id, 1)).toMatchObject({ recorded: true, finished: true }); // and the process dies
    expect(await state(id)).toMatchObject({ status: 'running', finished: false, webhook_status: null });

    expect(await processBatchItem(deps, id, 1)).toBe('already_done'); // BullMQ runs the stalled job again
    const after = await state(id);
    expect(after).toMatchObject({
      status: 'completed',
      completed: 2,
      failed: 0,
      finished: true,
      webhook_status: 'delivered',
    });
    expect(after.quota).toEqual({
      used: before.used + 2,
      reserved: before.reserved - 2,
      reservations: before.reservations - 1,
    });
    expect(deliveredFor(id)).toHaveLength(1);
    expect(deliveredFor(id)[0]!.payload).toMatchObject({
      type: 'triage.batch.finished',
      status: 'completed',
      completed: 2,
    });

    // Once finished and delivered, running the job again changes nothing.
    expect(await processBatchItem(deps, id, 0)).toBe('already_done');
    expect(deliveredFor(id)).toHaveLength(1);
    expect((await state(id)).quota).toEqual(after.quota);
  });

  it('a webhook still pending when the finisher died is delivered by the next job of the batch', async () => {
    const id = await batch();
    await storeOnly(id, 0);
    await storeOnly(id, 1);
    const finished = await finishBatch(t.infra.pool, id, t.clock()); // and the process dies
    expect(finished).toMatchObject({ status: 'completed', webhookStatus: 'pending' });
    expect(await finishBatch(t.infra.pool, id, t.clock())).toBeNull(); // finished once only
    expect(deliveredFor(id)).toHaveLength(0);

    await processBatchItem(deps, id, 0);
    expect(deliveredFor(id)).toHaveLength(1);
    expect(await state(id)).toMatchObject({ webhook_status: 'delivered' });
  });

  it('an item whose job failed for good is failed with internal_error, and its batch finishes', async () => {
    const id = await batch();
    const before = (await state(id)).quota;
    expect(await processBatchItem(deps, id, 0)).toBe('done');
    await failBatchItem(deps, id, 1);
    await failBatchItem(deps, id, 1); // the failed event twice: recorded once
    const after = await state(id);
    expect(after).toMatchObject({
      status: 'partial',
      completed: 1,
      failed: 1,
      finished: true,
      webhook_status: 'delivered',
    });
    // One answered item used, the other back: this batch's reservation is gone.
    expect(after.quota).toEqual({
      used: before.used + 1,
      reserved: before.reserved - 2,
      reservations: before.reservations - 1,
    });
    const item = await t.infra.pool.query(
      `SELECT status, error FROM triage_batch_items WHERE batch_id = $1 AND index = 1`,
      [id],
    );
    expect(item.rows[0]).toEqual({
      status: 'failed',
      error: { code: 'internal_error', detail: 'This item could not be triaged after several attempts.' },
    });
    expect(deliveredFor(id)).toHaveLength(1);
  });
});

describe('the stuck-batch sweep (maintenance)', () => {
  const MIN = 60_000;
  /** Job states as the sweep's probe reports them; a job not listed is active. */
  const jobStates = new Map<string, string>();
  const probe = { getJobState: async (jobId: string) => jobStates.get(jobId) ?? 'active' };
  const sweep = (jobs = probe) => failStuckBatches({ ...deps, jobs }, t.clock());

  it('fails an item whose job is gone or failed, once the batch is 15 minutes old, and the batch finishes', async () => {
    const id = await batch();
    const before = (await state(id)).quota;
    expect(await processBatchItem(deps, id, 0)).toBe('done');
    jobStates.set(`${id}-1`, 'failed'); // failed by the stalled checker: no worker saw a `failed` event

    t.clock.advance(14 * MIN);
    expect(await sweep()).toEqual({ itemsFailed: 0, batchesFinished: 0, webhooksResent: 0 });
    expect(await state(id)).toMatchObject({ status: 'running', finished: false });

    t.clock.advance(2 * MIN);
    expect(await sweep()).toEqual({ itemsFailed: 1, batchesFinished: 0, webhooksResent: 0 });
    const after = await state(id);
    expect(after).toMatchObject({
      status: 'partial',
      completed: 1,
      failed: 1,
      finished: true,
      webhook_status: 'delivered',
    });
    expect(after.quota).toEqual({
      used: before.used + 1,
      reserved: before.reserved - 2,
      reservations: before.reservations - 1,
    });
    expect(deliveredFor(id)).toHaveLength(1);
    expect(await sweep()).toEqual({ itemsFailed: 0, batchesFinished: 0, webhooksResent: 0 });
  });

  it('never touches an item whose job is waiting, delayed or active, however old', async () => {
    const id = await batch();
    jobStates.set(`${id}-0`, 'waiting');
    jobStates.set(`${id}-1`, 'delayed');
    t.clock.advance(3 * 60 * MIN);
    expect(await sweep()).toEqual({ itemsFailed: 0, batchesFinished: 0, webhooksResent: 0 });
    expect(await state(id)).toMatchObject({ status: 'queued', completed: 0, failed: 0, finished: false });

    // Its jobs run at last: the batch finishes the ordinary way, and the sweep has nothing to do.
    await processBatchItem(deps, id, 0);
    await processBatchItem(deps, id, 1);
    expect(await state(id)).toMatchObject({
      status: 'completed',
      finished: true,
      webhook_status: 'delivered',
    });
    expect(await sweep()).toEqual({ itemsFailed: 0, batchesFinished: 0, webhooksResent: 0 });
  });

  it('finishes a batch whose items were all stored by a process that died before finishing it', async () => {
    const id = await batch();
    await storeOnly(id, 0);
    await storeOnly(id, 1); // and the process dies; no job will run again
    t.clock.advance(16 * MIN);
    expect(await sweep()).toEqual({ itemsFailed: 0, batchesFinished: 1, webhooksResent: 0 });
    expect(await state(id)).toMatchObject({
      status: 'completed',
      finished: true,
      webhook_status: 'delivered',
    });
    expect(deliveredFor(id)).toHaveLength(1);
  });

  it('sends again a webhook its sender left pending, 15 minutes after the batch finished', async () => {
    const id = await batch();
    await storeOnly(id, 0);
    await storeOnly(id, 1);
    await finishBatch(t.infra.pool, id, t.clock()); // and the process dies while sending
    t.clock.advance(10 * MIN);
    expect(await sweep()).toEqual({ itemsFailed: 0, batchesFinished: 0, webhooksResent: 0 });
    t.clock.advance(6 * MIN);
    expect(await sweep()).toEqual({ itemsFailed: 0, batchesFinished: 0, webhooksResent: 1 });
    expect(await state(id)).toMatchObject({ webhook_status: 'delivered' });
    expect(deliveredFor(id)).toHaveLength(1);
    expect(await sweep()).toEqual({ itemsFailed: 0, batchesFinished: 0, webhooksResent: 0 });
  });

  it('asks the real triage queue: items of a batch whose jobs were never enqueued are failed', async () => {
    const id = await batch(); // the web process died between storing the batch and enqueuing it
    const before = (await state(id)).quota;
    t.clock.advance(16 * MIN);
    const report = await runMaintenance({
      db: t.infra.pool,
      quota: t.deps.quota,
      bus: null,
      clock: t.clock,
      batches: { ...deps, jobs: t.infra.queues.queue(TRIAGE_QUEUE) },
    });
    expect(report.batches).toEqual({ itemsFailed: 2, batchesFinished: 0, webhooksResent: 0 });
    const after = await state(id);
    expect(after).toMatchObject({
      status: 'failed',
      completed: 0,
      failed: 2,
      finished: true,
      webhook_status: 'delivered',
    });
    // Nothing answered: the whole reservation is back (maintenance may also have released expired ones).
    expect(after.quota.used).toBe(before.used);
    expect(after.quota.reservations).toBe(before.reservations - 1);
  });
});
