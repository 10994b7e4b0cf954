import { UnrecoverableError, type Job } from 'bullmq';
import { ingestScan, type IngestScanDeps } from '../domain/scans/ingest-scan.js';
import type { JobQueues } from './queue-kit.js';

/** Queue of stored scan files waiting to be parsed and persisted (docs/ingestion.md). */
export const SCAN_INGEST_QUEUE = 'scan-ingest';

export interface ScanIngestPayload {
  scanId: string;
  workspaceId: string;
}

/** What a `scan-ingest` job answers (kept as the job's return value). */
export type ScanIngestResult = { scanId: string; findings: number } | { skipped: true };

/** Thrown by a job that failed its scan itself (a broken file): not retried, nothing left to end. */
export class ScanAlreadyFailed extends UnrecoverableError {}

/**
 * Enqueues the parse of a stored scan. The job id is the scan id, so enqueuing the same scan
 * twice (an idempotent upload retried after a failed enqueue) adds one job, not two.
 * Attempts cover infrastructure failures (database down, worker crash); a broken file fails
 * at once through UnrecoverableError.
 */
export async function enqueueScanIngest(queues: JobQueues, payload: ScanIngestPayload): Promise<void> {
  await queues.queue<ScanIngestPayload>(SCAN_INGEST_QUEUE).add(SCAN_INGEST_QUEUE, payload, {
    jobId: payload.scanId,
    attempts: 5,
    backoff: { type: 'exponential', delay: 2_000 },
    removeOnComplete: { age: 24 * 3600, count: 10_000 },
    removeOnFail: { age: 7 * 24 * 3600 },
  });
}

/**
 * The processor: runs the ingest use case for the job's scan. A broken file has already failed
 * its scan, so its job ends with {@link ScanAlreadyFailed} (no retry); anything else is rethrown
 * and attempts and backoff apply.
 */
export function scanIngestProcessor(deps: IngestScanDeps) {
  return async (job: Job<ScanIngestPayload>): Promise<ScanIngestResult> => {
    const outcome = await ingestScan(deps, job.data);
    if (outcome.kind === 'unparseable') throw new ScanAlreadyFailed(outcome.error.message);
    if (outcome.kind === 'skipped') return { skipped: true };
    return { scanId: outcome.scanId, findings: outcome.findings };
  };
}
