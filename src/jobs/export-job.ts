import { UnrecoverableError, type Job } from 'bullmq';
import type { ExportService } from '../domain/exports/export-service.js';
import type { JobQueues } from './queue-kit.js';

/** Queue of case and finding exports too large to stream in one request. */
export const EXPORT_QUEUE = 'exports';

export interface ExportPayload {
  exportId: string;
}

/**
 * Queues an export's render. The job id is the export id, so a retried enqueue adds one job.
 * Attempts cover a worker that died or a database that went away mid-render: the render
 * starts over (it writes a new file and replaces nothing until it commits).
 */
export async function enqueueExport(queues: JobQueues, exportId: string): Promise<void> {
  await queues.queue<ExportPayload>(EXPORT_QUEUE).add(
    'render',
    { exportId },
    {
      jobId: exportId,
      attempts: 3,
      backoff: { type: 'exponential', delay: 5_000 },
      removeOnComplete: { age: 24 * 3600, count: 10_000 },
      removeOnFail: { age: 7 * 24 * 3600 },
    },
  );
}

/** The processor: renders the export; its last failed attempt marks the export failed. */
export function exportProcessor(exports: Pick<ExportService, 'run' | 'fail'>) {
  return async (job: Job<ExportPayload>): Promise<void> => {
    const { exportId } = job.data;
    if (typeof exportId !== 'string') throw new UnrecoverableError('export job without an export id');
    try {
      await exports.run(exportId);
    } catch (err) {
      const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (last) await exports.fail(exportId, 'The export could not be written; create it again.');
      throw err;
    }
  };
}
