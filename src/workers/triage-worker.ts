import type { Job } from 'bullmq';
import type { QueueKit, WorkerHandle } from '../jobs/queue-kit.js';
import { TRIAGE_QUEUE, triageItemProcessor, type TriageItemPayload } from '../jobs/triage-batch.js';
import { failBatchItem, type BatchProcessorDeps } from '../domain/triage/batch-processor.js';
import type { Logger } from '../lib/logger.js';
import { isFinalFailure } from '../lib/job-state.js';
import { createCoalescer } from '../lib/coalescer.js';
import { loadItems } from '../domain/triage/batch-store.js';

/**
 * The batch-triage worker: bounded concurrency per process; the provider limiters inside the
 * triage service are shared by every job of the process (and across processes via Redis).
 */
export function startTriageWorker(
  queues: QueueKit,
  deps: BatchProcessorDeps,
  options: { concurrency: number; logger: Logger },
): WorkerHandle {
  // Concurrent jobs read their items together: one query for the items that arrive while
  // the previous read runs (their answers are stored together too: see the triage service).
  const reads = createCoalescer((keys: { batchId: string; index: number }[]) => loadItems(deps.db, keys), {
    maxItems: 64,
  });
  const withReads: BatchProcessorDeps = {
    ...deps,
    loadItem: (batchId, index) => reads.submit({ batchId, index }),
  };
  const worker = queues.worker<TriageItemPayload, string>(TRIAGE_QUEUE, triageItemProcessor(withReads), {
    concurrency: options.concurrency,
  });
  worker.on('failed', (job, err) => {
    const j = job as Job<TriageItemPayload> | undefined;
    options.logger.warn({ job: j?.id, err: (err as Error)?.message }, 'triage item job failed');
    // BullMQ will not retry the job: its item fails, so its batch still finishes (and settles its quota).
    if (j?.data && isFinalFailure(j, err)) {
      const { batchId, index } = j.data;
      failBatchItem(deps, batchId, index).catch((e: unknown) =>
        options.logger.error(
          { job: j.id, err: (e as Error).message },
          'could not record a failed batch item',
        ),
      );
    }
  });
  return worker;
}
