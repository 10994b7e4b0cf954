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
import { ModelsBusyError } from './models-busy.js';

export interface BatchProcessorDeps {
  db: Pool;
  triage: Pick<TriageService, 'runBatchItem'>;
  pepper: string;
  clock: () => Date;
  deliver?: typeof deliverWebhook;
  /**
   * How long after its acceptance a batch's items may wait for model capacity (BATCH_DEADLINE_MS,
   * docs/triage.md#waiting-for-model-capacity). @defaultValue {@link DEFAULT_BATCH_DEADLINE_MS}
   */
  batchDeadlineMs?: number;
  /** How an item is read; the worker passes a grouped reader (`loadItems`). @defaultValue `loadItem` */
  loadItem?: (batchId: string, index: number) => Promise<LoadedItem>;
}

/** How long a batch's items may wait for model capacity, from its acceptance: one hour. */
export const DEFAULT_BATCH_DEADLINE_MS = 3_600_000;

/**
 * What processing an item did: its answer or error recorded (`done`), nothing to do
 * (`already_done`, `missing`), or every model at its rate limit with the batch's deadline still
 * ahead: run the item again in `waitMs`, an attempt not spent.
 */
export type BatchItemResult = 'done' | 'already_done' | 'missing' | { waitMs: number };

/** The detail of an item that was still waiting for model capacity at its batch's deadline. */
export const DEADLINE_DETAIL =
  "Every model was at its rate limit until the batch's deadline; submit this item again later.";

/**
 * How long an item whose models are all busy waits before it is tried again: until the first of
 * them expects capacity, but never past its batch's deadline, where it is tried once more; null
 * when the deadline has passed (docs/triage.md#waiting-for-model-capacity).
 */
export function capacityWaitMs(
  acceptedAt: Date,
  now: Date,
  deadlineMs: number,
  retryAfterMs: number,
): number | null {
  const left = acceptedAt.getTime() + deadlineMs - now.getTime();
  if (left <= 0) return null;
  return Math.max(1, Math.min(retryAfterMs, left));
}

/**
 * Processes one batch item (docs/triage.md#batch-triage). Safe to run again for the same item: a recorded
 * item is skipped, and an answer whose recording loses a race is rolled back with its
 * ledger rows. The job that records the last item finishes the batch: its final status and
 * quota settlement (the answered items are used, the rest released) in one statement, then
 * the webhook. A job run again for an item already recorded (its process died after storing
 * it) completes what that process may not have: the batch's finish, and a webhook still
 * pending — so a webhook is delivered at least once, and receivers deduplicate by `batchId`.
 * An item whose models are all at their rate limit answers how long to wait (`capacityWaitMs`).
 */
export async function processBatchItem(
  deps: BatchProcessorDeps,
  batchId: string,
  index: number,
): Promise<BatchItemResult> {
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
    let error: { code: string; detail: string };
    if (err instanceof ModelsBusyError) {
      // Every model at its rate limit is no failure: the item waits, its attempts kept for real
      // failures, until its batch's deadline.
      const waitMs = capacityWaitMs(batch.createdAt, deps.clock(), deadlineOf(deps), err.retryAfterMs);
      if (waitMs !== null) return { waitMs };
      error = { code: 'overloaded', detail: DEADLINE_DETAIL };
    } else if (err instanceof AppError && err.code !== 'overloaded') {
      error = { code: err.code, detail: err.detail };
    } else {
      // Infrastructure trouble (the database, the queue): not the item's own error, so the job
      // retries with backoff (its attempts spent, the item fails with `internal_error`).
      throw err;
    }
    const outcome = await recordItemError(deps.db, batchId, index, error, deps.clock());
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

function deadlineOf(deps: BatchProcessorDeps): number {
  return deps.batchDeadlineMs ?? DEFAULT_BATCH_DEADLINE_MS;
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
