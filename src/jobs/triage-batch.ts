import { DEFAULT_ITEM_RETRY, type ItemRetry } from '../lib/config.js';
import { DelayedError, type Job } from 'bullmq';
import { processBatchItem, type BatchProcessorDeps } from '../domain/triage/batch-processor.js';
import type { JobQueues } from './queue-kit.js';

/** Batch triage runs one job per item on this queue. */
export const TRIAGE_QUEUE = 'triage';

export interface TriageItemPayload {
  batchId: string;
  index: number;
}

/**
 * Enqueues every item of a batch. Job ids are derived from the batch and index, so enqueuing
 * the same batch twice adds nothing. Items are added in chunks to bound each round trip.
 */
export async function enqueueBatchItems(
  queues: JobQueues,
  batchId: string,
  total: number,
  retry: ItemRetry = DEFAULT_ITEM_RETRY,
): Promise<void> {
  const queue = queues.queue<TriageItemPayload>(TRIAGE_QUEUE);
  for (let start = 0; start < total; start += 500) {
    const jobs = [];
    for (let index = start; index < Math.min(total, start + 500); index++) {
      jobs.push({
        name: 'item',
        data: { batchId, index },
        opts: {
          jobId: `${batchId}-${index}`,
          attempts: retry.attempts,
          backoff: { type: 'exponential', delay: retry.backoffMs },
          removeOnComplete: 1000,
          removeOnFail: 5000,
        },
      });
    }
    await queue.addBulk(jobs);
  }
}

/**
 * The processor: triages the job's item (`processBatchItem`, safe to run again for the same
 * item). Its answer (`done`, `already_done`, `missing`) is the job's return value. An item whose
 * models are all at their rate limit is delayed until they expect capacity (`DelayedError`: no
 * attempt spent, the worker slot freed meanwhile), as a workflow delivery waits for its target.
 */
export function triageItemProcessor(deps: BatchProcessorDeps) {
  return async (job: Job<TriageItemPayload>, token?: string): Promise<string> => {
    const result = await processBatchItem(deps, job.data.batchId, job.data.index);
    if (typeof result === 'string') return result;
    await job.moveToDelayed(Date.now() + result.waitMs, token);
    throw new DelayedError();
  };
}
