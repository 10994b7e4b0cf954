import type { QueueHandle } from './queue-kit.js';

/** Queue of stored scan files waiting to be parsed and persisted (DECISIONS §8). */
export const SCAN_INGEST_QUEUE = 'scan-ingest';

export interface ScanIngestPayload {
  scanId: string;
  workspaceId: string;
}

/**
 * Enqueues the parse of a stored scan. The job id is the scan id, so enqueuing the same scan
 * twice (an idempotent upload retried after a failed enqueue) adds one job, not two.
 * Attempts cover infrastructure failures (database down, worker crash); a broken file fails
 * at once through UnrecoverableError.
 */
export async function enqueueScanIngest(
  queue: QueueHandle<ScanIngestPayload>,
  payload: ScanIngestPayload,
): Promise<void> {
  await queue.add(SCAN_INGEST_QUEUE, payload, {
    jobId: payload.scanId,
    attempts: 5,
    backoff: { type: 'exponential', delay: 2_000 },
    removeOnComplete: { age: 24 * 3600, count: 10_000 },
    removeOnFail: { age: 7 * 24 * 3600 },
  });
}
