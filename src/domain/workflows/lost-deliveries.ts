import type { Queryable } from '../../db/pool.js';
import { groupBy } from '../../lib/group-by.js';
import { orphanedDeliveries } from './delivery-store.js';

/**
 * How old a pending delivery without a known next attempt must be before maintenance treats its
 * job as lost: well past the moment between the trigger's INSERT and its enqueue, so a delivery
 * that is only being queued is not re-queued (that would be harmless anyway: see below).
 */
export const LOST_DELIVERY_AGE_MS = 60_000;

/**
 * Queues again the pending deliveries whose job may be gone (`orphanedDeliveries`: a crash
 * between the trigger's INSERT and its enqueue, or a queue that lost its data). Idempotent:
 * `enqueue` uses the delivery id as the job id, so a delivery whose job is still in the queue
 * (waiting, delayed or running) is not queued a second time. Run at worker start and by the
 * periodic maintenance job. Returns how many were handed to `enqueue`.
 */
export async function requeueLostDeliveries(
  db: Queryable,
  enqueue: (workflowId: string, deliveryIds: string[]) => Promise<void>,
  olderThanMs: number = LOST_DELIVERY_AGE_MS,
): Promise<number> {
  const rows = await orphanedDeliveries(db, olderThanMs);
  const byWorkflow = groupBy(
    rows,
    (r) => r.workflow_id,
    (r) => r.id,
  );
  for (const [workflowId, ids] of byWorkflow) await enqueue(workflowId, ids);
  return rows.length;
}
