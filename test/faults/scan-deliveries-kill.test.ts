import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitForScan } from '../helpers/scan-app.js';
import { startOutboxKillRig, type OutboxKillRig } from '../helpers/outbox-kill.js';
import { DELIVERY_QUEUE } from '../../src/jobs/workflow-delivery.js';

/**
 * docs/workflows.md#when-deliveries-happen: a scan's `case.created` deliveries are part of its
 * completion transaction. A real worker process is killed (SIGKILL) while its completion waits on
 * the workflow outbox, which the test holds. Whatever the kill interrupted, no case the scan
 * created is left without its delivery: the restarted worker completes the scan and every new
 * case has exactly one `case.created` delivery, queued.
 */
const DIR = path.resolve('test/fixtures/scans/rescan');

let rig: OutboxKillRig | undefined;
afterAll(async () => rig?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('kill -9 of the worker while a scan records its workflow deliveries', () => {
  it('loses no case.created delivery', async () => {
    rig = await startOutboxKillRig('created', DIR);
    const { t, owner } = rig;
    const db = t.infra.pool;
    await rig.holdOutbox();
    const scanId = await rig.upload('nessus-first.nessus');
    await rig.waitBlockedOnOutbox();
    await rig.killWorkerAndReleaseOutbox();

    await rig.restartWorker();
    const worker = rig.worker();
    const done = await waitForScan(t.app, owner.key, scanId, 120_000);
    expect(done, worker.output()).toMatchObject({ status: 'completed', counts: { new: 12 } });
    const { rows } = await db.query<{ cases: number; deliveries: number; per_case: number }>(
      `SELECT (SELECT count(*) FROM cases WHERE workspace_id = $1)::int AS cases,
              (SELECT count(*) FROM workflow_deliveries WHERE workspace_id = $1 AND event = 'case.created')::int AS deliveries,
              (SELECT count(DISTINCT case_id) FROM workflow_deliveries WHERE workspace_id = $1 AND event = 'case.created')::int AS per_case`,
      [owner.workspaceId],
    );
    expect(rows[0]).toEqual({ cases: 12, deliveries: 12, per_case: 12 });
    const { rows: ids } = await db.query<{ id: string }>(
      `SELECT id FROM workflow_deliveries WHERE workspace_id = $1 AND event = 'case.created'`,
      [owner.workspaceId],
    );
    const queue = t.infra.queues.queue(DELIVERY_QUEUE);
    // Queued by the worker just after the commit that the scan's status shows.
    for (const { id } of ids)
      for (let i = 0; (await queue.getJobState(id)) === 'unknown'; i++) {
        if (i > 1500) throw new Error(`delivery ${id} never queued:\n${worker.output()}`);
        await sleep(20);
      }
    await worker.kill('SIGTERM');
  }, 240_000);
});
