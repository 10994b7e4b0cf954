import type { Pool } from '../../db/pool.js';
import { AppError } from '../../lib/errors.js';
import { unsealSecret } from '../keys/key-secrets.js';
import {
  finishBatch,
  loadItem,
  recordItemError,
  setWebhookStatus,
  type BatchRow,
  type LoadedItem,
} from './batch-store.js';
import type { TriageService } from './triage-service.js';
import { deliverWebhook } from './webhook.js';

export interface BatchProcessorDeps {
  db: Pool;
  triage: Pick<TriageService, 'runBatchItem'>;
  pepper: string;
  clock: () => Date;
  deliver?: typeof deliverWebhook;
  /** How an item is read; the worker passes a grouped reader (`loadItems`). @defaultValue `loadItem` */
  loadItem?: (batchId: string, index: number) => Promise<LoadedItem>;
}

/**
 * Processes one batch item (docs/triage.md#batch-triage). Safe to run again for the same item: a recorded
 * item is skipped, and an answer whose recording loses a race is rolled back with its
 * ledger rows. The job that records the last item finishes the batch: its final status and
 * quota settlement (the answered items are used, the rest released) in one statement, then
 * the webhook. A job run again for an item already recorded (its process died after storing
 * it) completes what that process may not have: the batch's finish, and a webhook still
 * pending — so a webhook is delivered at least once, and receivers deduplicate by `batchId`.
 */
export async function processBatchItem(
  deps: BatchProcessorDeps,
  batchId: string,
  index: number,
): Promise<string> {
  const item = await (deps.loadItem ? deps.loadItem(batchId, index) : loadItem(deps.db, batchId, index));
  if (!item) return 'missing';
  if (item.status !== 'queued') {
    await resume(deps, item.batch);
    return 'already_done';
  }
  const { batch } = item;
  const caller = {
    workspaceId: batch.workspaceId,
    keyId: batch.keyId,
    requestId: `batch:${batchId}:${index}`,
    aiCallLimit: 0,
  };
  let finished = false;
  try {
    const outcome = await deps.triage.runBatchItem(caller, item.request, {
      batchId,
      index,
      caseId: item.caseId,
    });
    if (!outcome.recorded) return 'already_done';
    finished = outcome.finished;
  } catch (err) {
    // Infrastructure trouble, or every model at its rate limit (`overloaded`): not the item's
    // own error, so the job retries with backoff (its attempts spent, the item fails).
    if (!(err instanceof AppError) || err.code === 'overloaded') throw err;
    const outcome = await recordItemError(
      deps.db,
      batchId,
      index,
      { code: err.code, detail: err.detail },
      deps.clock(),
    );
    if (!outcome.recorded) return 'already_done';
    finished = outcome.finished;
  }
  if (finished) await finish(deps, batchId);
  return 'done';
}

/**
 * An item's job failed for good (its attempts spent on errors that were not the item's own):
 * the item is recorded as failed with `internal_error`, so its batch still finishes.
 */
export async function failBatchItem(deps: BatchFinishDeps, batchId: string, index: number): Promise<void> {
  const error = { code: 'internal_error', detail: 'This item could not be triaged after several attempts.' };
  const outcome = await recordItemError(deps.db, batchId, index, error, deps.clock());
  if (outcome.finished) await finish(deps, batchId);
}

/** What finishing a batch and sending its webhook need: no triage. */
export type BatchFinishDeps = Pick<BatchProcessorDeps, 'db' | 'pepper' | 'clock' | 'deliver'>;

/** Finishes a batch whose items are all recorded (once: see `finishBatch`), then sends its webhook. */
async function finish(deps: BatchFinishDeps, batchId: string): Promise<void> {
  const batch = await finishBatch(deps.db, batchId, deps.clock());
  if (batch?.webhookStatus === 'pending') await notify(deps, batch);
}

/**
 * What the job that recorded a batch's last item may have left undone when it died: finishing
 * the batch, or sending its pending webhook. Also run by the stuck-batch sweep.
 */
export async function resume(deps: BatchFinishDeps, batch: BatchRow): Promise<void> {
  if (!batch.finishedAt && batch.completed + batch.failed === batch.total) await finish(deps, batch.id);
  else if (batch.finishedAt && batch.webhookStatus === 'pending') await notify(deps, batch);
}

/** Delivers a finished batch's webhook and records how it went (at least once: see above). */
async function notify(deps: BatchFinishDeps, batch: BatchRow): Promise<void> {
  if (!batch.webhookUrl || !batch.webhookKeySealed) return;
  const key = unsealSecret(deps.pepper, batch.webhookKeySealed!);
  const status = await (deps.deliver ?? deliverWebhook)(batch.webhookUrl!, key, {
    type: 'triage.batch.finished',
    batchId: batch.id,
    status: batch.status,
    total: batch.total,
    completed: batch.completed,
    failed: batch.failed,
    finishedAt: batch.finishedAt?.toISOString() ?? null,
  });
  await setWebhookStatus(deps.db, batch.id, status);
}
