import type { QueueKit, WorkerHandle } from '../jobs/queue-kit.js';
import { TRIAGE_QUEUE, type TriageItemPayload } from '../jobs/triage-batch.js';
import { processBatchItem, type BatchProcessorDeps } from '../domain/triage-service/batch-processor.js';
import type { Logger } from '../lib/logger.js';

/**
 * The batch-triage worker: bounded concurrency per process; the provider limiters inside the
 * triage service are shared by every job of the process (and across processes via Redis).
 */
export function startTriageWorker(queues: QueueKit, deps: BatchProcessorDeps, options: { concurrency: number; logger: Logger }): WorkerHandle {
  const worker = queues.worker<TriageItemPayload, string>(TRIAGE_QUEUE, (job) => processBatchItem(deps, job.data.batchId, job.data.index), {
    concurrency: options.concurrency,
  });
  worker.on('failed', (job, err) => options.logger.warn({ job: (job as { id?: string })?.id, err: (err as Error)?.message }, 'triage item job failed'));
  return worker;
}
