import { jobIsOver, type JobStateProbe } from '../../lib/job-state.js';
import { failBatchItem, resume, type BatchFinishDeps } from './batch-processor.js';
import { queuedItemIndexes, staleBatches } from './batch-store.js';

export interface StuckBatchSweepDeps extends BatchFinishDeps {
  /** The `triage` queue (an item's job id is `<batchId>-<index>`). */
  jobs: JobStateProbe;
  /** How old an unfinished batch, or a finished one whose webhook is `pending`, must be. @defaultValue 15 minutes */
  stuckAfterMs?: number;
  /** Batches examined per run, for each of the two checks; the oldest first. @defaultValue 100 */
  limit?: number;
}

export interface BatchSweepReport {
  /** Items left `queued` whose job is gone or failed for good, now failed with `internal_error`. */
  itemsFailed: number;
  /** Batches whose items were all recorded but which nobody finished. */
  batchesFinished: number;
  /** Webhooks left `pending` by a process that died while sending them, sent again. */
  webhooksResent: number;
}

const STUCK_BATCH_AFTER_MS = 15 * 60_000;
const PROBES_AT_ONCE = 50;

/**
 * Makes batches that nothing else would finish, finish (docs/triage.md#batch-triage). The worker's `failed`
 * listener fails an item whose job spent its attempts, and a job run again completes what its
 * process left undone; this covers what neither sees: a job failed by BullMQ's stalled checker
 * (its worker died mid-job too often: no `failed` event reaches a worker), a job lost between the
 * batch's insert and its enqueue, a process that died between recording a batch's last item and
 * finishing it, or while sending its webhook. An item whose job is waiting, delayed or active is
 * never touched, however old: a backlog is not a failure. Idempotent and safe to run
 * concurrently: every step is guarded in SQL (an item fails once, a batch finishes once); a
 * webhook may be sent twice, which its at-least-once contract allows.
 */
export async function failStuckBatches(deps: StuckBatchSweepDeps, now: Date): Promise<BatchSweepReport> {
  const cutoff = new Date(now.getTime() - (deps.stuckAfterMs ?? STUCK_BATCH_AFTER_MS));
  const limit = deps.limit ?? 100;
  const report: BatchSweepReport = { itemsFailed: 0, batchesFinished: 0, webhooksResent: 0 };

  for (const batch of await staleBatches(deps.db, 'unfinished', cutoff, limit)) {
    if (batch.completed + batch.failed === batch.total) {
      await resume(deps, batch);
      report.batchesFinished++;
      continue;
    }
    const indexes = await queuedItemIndexes(deps.db, batch.id);
    // The queue is asked about a chunk of items at once: a large batch in a backlog has many.
    for (let at = 0; at < indexes.length; at += PROBES_AT_ONCE) {
      const chunk = indexes.slice(at, at + PROBES_AT_ONCE);
      const states = await Promise.all(chunk.map((index) => deps.jobs.getJobState(`${batch.id}-${index}`)));
      for (const [k, state] of states.entries()) {
        if (!jobIsOver(state)) continue;
        await failBatchItem(deps, batch.id, chunk[k]!); // finishes the batch with its last item
        report.itemsFailed++;
      }
    }
  }

  for (const batch of await staleBatches(deps.db, 'webhook_pending', cutoff, limit)) {
    await resume(deps, batch);
    report.webhooksResent++;
  }
  return report;
}
