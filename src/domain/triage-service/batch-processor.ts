import type { Pool } from '../../db/pool.js';
import { AppError } from '../../lib/errors.js';
import { unsealSecret } from '../keys/key-secrets.js';
import type { QuotaService } from '../usage/quota.js';
import {
  finishBatch,
  loadItem,
  recordItemError,
  setWebhookStatus,
  type BatchRow,
  type LoadedItem,
} from './batches.js';
import type { TriageService } from './triage-service.js';
import { deliverWebhook } from './webhook.js';

export interface BatchProcessorDeps {
  db: Pool;
  triage: TriageService;
  quota: QuotaService;
  pepper: string;
  clock: () => Date;
  deliver?: typeof deliverWebhook;
  /** How an item is read; the worker passes a grouped reader (`loadItems`). @defaultValue `loadItem` */
  loadItem?: (batchId: string, index: number) => Promise<LoadedItem>;
}

/**
 * Processes one batch item (DECISIONS §7). Safe to run again for the same item: a recorded
 * item is skipped, and an answer whose recording loses a race is rolled back with its
 * ledger rows. The job that records the last item finishes the batch: it settles the batch's
 * quota reservation (the answered items are used, the rest released) and calls the webhook.
 */
export async function processBatchItem(
  deps: BatchProcessorDeps,
  batchId: string,
  index: number,
): Promise<string> {
  const item = await (deps.loadItem ? deps.loadItem(batchId, index) : loadItem(deps.db, batchId, index));
  if (!item) return 'missing';
  if (item.status !== 'queued') return 'already_done';
  const { batch } = item;
  const caller = {
    workspaceId: batch.workspaceId,
    keyId: batch.keyId,
    requestId: `batch:${batchId}:${index}`,
    aiCallLimit: 0,
  };
  let finished = false;
  try {
    const enrichment = await deps.triage.prepare(item.request);
    const outcome = await deps.triage.run(caller, item.request, enrichment, { batchId, index });
    if (!outcome.recorded) return 'already_done';
    finished = outcome.finished;
  } catch (err) {
    if (!(err instanceof AppError)) throw err; // infrastructure trouble: let the job retry
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

async function finish(deps: BatchProcessorDeps, batchId: string): Promise<void> {
  const batch = await finishBatch(deps.db, batchId, deps.clock());
  if (!batch) return;
  if (batch.reservationId) {
    if (batch.completed > 0) await deps.quota.commit(batch.reservationId, batch.completed);
    await deps.quota.release(batch.reservationId);
  }
  if (batch.webhookUrl && batch.webhookKeySealed) await notify(deps, batch);
}

async function notify(deps: BatchProcessorDeps, batch: BatchRow): Promise<void> {
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
