import { UnrecoverableError, type Job } from 'bullmq';
import { isFinalFailure } from '../lib/job-state.js';
import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import type { Pool } from '../db/pool.js';
import type { QueueKit } from '../jobs/queue-kit.js';
import { SCAN_INGEST_QUEUE, type ScanIngestPayload } from '../jobs/scan-ingest.js';
import { isParseErrorLike } from '../parsers/index.js';
import { createParserPool, parseFileInPool, type ParserPool } from './parser-pool.js';
import { createLocalScanStorage, type ScanStorage } from '../domain/scans/scan-storage.js';
import { completeScan } from '../domain/scans/ingest-store.js';
import { startParsing } from '../domain/scans/scan-store.js';
import { openScanWriter } from '../domain/scans/scan-writer.js';
import type { ScanError } from '../domain/scans/scan-store.js';
import {
  INGEST_GAVE_UP,
  INGEST_STALLED,
  discardRowsOfFailedScan,
  failScanForGood,
} from '../domain/scans/scan-failure.js';

/** Thrown by a job that failed its scan itself (a broken file): not retried, nothing left to end. */
class ScanAlreadyFailed extends UnrecoverableError {}

/** BullMQ's reason for a job that stalled more than `maxStalledCount` times (both backends). */
const STALLED_OUT = 'job stalled more than allowable limit';

/** Options of {@link startScanIngestWorker}. */
export interface ScanIngestWorkerDeps {
  queues: QueueKit;
  pool: Pool;
  logger: Logger;
  config: Pick<Config, 'parserThreads' | 'scanStorageDir'>;
  /** @defaultValue a local-directory storage on `config.scanStorageDir` */
  storage?: ScanStorage;
  /** A shared parser pool; when absent one of `config.parserThreads` threads is created and destroyed on close. */
  parserPool?: ParserPool;
  /** Scans parsed at once by this process. @defaultValue config.parserThreads */
  concurrency?: number;
  /** Findings per persisted batch. @defaultValue 1000 */
  batchSize?: number;
  /** How long a job's lock lives without renewal before another worker may take it over. @defaultValue 30000 */
  lockDurationMs?: number;
  /** How often this worker looks for jobs whose worker died. @defaultValue 30000 */
  stalledIntervalMs?: number;
  /** Told how each scan ended (Prometheus metrics). @defaultValue none */
  observer?: ScanIngestObserver;
  /**
   * Starts the triage a completed scan's upload asked for (`triage=new|all`, DECISIONS §8);
   * idempotent per scan. A failure fails the job, so its retry starts the triage again.
   * @defaultValue none (no case triage)
   */
  triageScan?: (scanId: string) => Promise<void>;
  /**
   * Called once a scan completed, with its workspace and id: mapped workflows (issue 14) pick
   * up the cases it created or reopened. Its failure is logged, never fails the scan.
   * @defaultValue none
   */
  afterScan?: (workspaceId: string, scanId: string) => Promise<unknown>;
}

/** Sees each scan this worker ends: parsed (its bytes and findings), unparseable, or given up. */
export interface ScanIngestObserver {
  scanEnded(scan: {
    format: string;
    outcome: 'completed' | 'unparseable' | 'gave_up';
    bytes: number;
    findings: number;
  }): void;
}

/**
 * The `scan-ingest` BullMQ worker (DECISIONS §8): streams a stored scan through the Piscina
 * parser pool into a scan writer. A batch is acknowledged once it is encoded and queued, and
 * the writer's bounded queue holds the parser back (the pool's ack protocol is the
 * backpressure: file read → parser → encoder → database), so parsing and writing overlap while
 * memory stays bounded by a few batches.
 *
 * Failure handling (STYLE §Errors): a broken file (a ParseError, matched by name/code since it
 * crosses a thread boundary) fails the scan with its position and throws UnrecoverableError, so
 * it is not retried; anything else (database, a crash) is rethrown and retried, and because
 * every write is keyed by (scan, record index) a retry never duplicates. Every final failure of
 * a job (attempts used up, unrecoverable, or stalled out: see {@link isFinalFailure}) fails its
 * scan and removes its file, once (`failScanForGood`), so no scan stays `parsing` for ever.
 */
export function startScanIngestWorker(deps: ScanIngestWorkerDeps): { close(): Promise<void> } {
  const storage = deps.storage ?? createLocalScanStorage(deps.config.scanStorageDir);
  const parserPool = deps.parserPool ?? createParserPool({ maxThreads: deps.config.parserThreads });
  const ownsPool = !deps.parserPool;
  const log = deps.logger.child({ queue: SCAN_INGEST_QUEUE });

  async function ingest(
    job: Job<ScanIngestPayload>,
  ): Promise<{ scanId: string; findings: number } | { skipped: true }> {
    const scan = await startParsing(deps.pool, job.data.scanId);
    if (!scan) {
      await storage.remove(`${job.data.workspaceId}/${job.data.scanId}`);
      // Completed by an attempt that may have died before starting its triage.
      await deps.triageScan?.(job.data.scanId);
      return { skipped: true };
    }
    const file = storage.localPath(scan.storagePath);
    const writer = await openScanWriter(deps.pool, {
      id: scan.id,
      workspaceId: scan.workspaceId,
      uploadAsset: scan.asset.name,
    });
    try {
      let result;
      try {
        result = await parseFileInPool(
          parserPool,
          {
            path: file,
            format: scan.format,
            gzip: false,
            batchSize: deps.batchSize ?? 1000,
            uploadAsset: scan.asset.name,
          },
          (batch, info) => writer.write(batch, info.bytesRead),
        );
        await writer.flush();
      } finally {
        await writer.close();
      }
      const completed = await completeScan(deps.pool, scan.id, { bytes: result.bytes, notes: result.notes });
      // Lost the race: the scan was failed (e.g. this job stalled out while still running) or
      // another attempt completed it. Only a failed scan's late rows are dropped.
      if (!completed) await discardRowsOfFailedScan(deps.pool, scan.id);
      else
        await deps
          .afterScan?.(scan.workspaceId, scan.id)
          .catch((err: unknown) =>
            log.warn(
              { scanId: scan.id, err: (err as Error)?.message },
              'workflows not triggered for the scan',
            ),
          );
      await storage.remove(scan.storagePath);
      // Only a completed scan is triaged (triageScan checks), whichever attempt completed it.
      await deps.triageScan?.(scan.id);
      log.info(
        { scanId: scan.id, findings: result.count, bytes: result.bytes, resumedAt: writer.resumeAt },
        'scan ingested',
      );
      deps.observer?.scanEnded({
        format: scan.format,
        outcome: 'completed',
        bytes: result.bytes,
        findings: result.count,
      });
      return { scanId: scan.id, findings: result.count };
    } catch (err) {
      const broken = brokenFileError(err);
      if (!broken) throw err;
      await failScanForGood({ pool: deps.pool, storage }, scan.id, broken);
      log.info({ scanId: scan.id, error: broken }, 'scan failed: unparseable');
      deps.observer?.scanEnded({ format: scan.format, outcome: 'unparseable', bytes: 0, findings: 0 });
      throw new ScanAlreadyFailed(broken.message);
    }
  }

  const worker = deps.queues.worker<ScanIngestPayload, unknown>(SCAN_INGEST_QUEUE, ingest, {
    concurrency: deps.concurrency ?? deps.config.parserThreads,
    lockDuration: deps.lockDurationMs ?? 30_000,
    stalledInterval: deps.stalledIntervalMs ?? 30_000,
    maxStalledCount: 3,
  });
  // Failures whose scan is still being ended; close() waits for them.
  const ending = new Set<Promise<void>>();
  worker.on('failed', (...args: unknown[]) => {
    const [job, err] = args as [Job<ScanIngestPayload> | undefined, Error | undefined];
    // No job: BullMQ could not even load it; the maintenance sweep ends its scan.
    // The job ended its broken scan itself, with the parser's reason and position.
    if (!job || err instanceof ScanAlreadyFailed) return;
    if (!isFinalFailure(job, err)) {
      log.warn(
        { scanId: job.data.scanId, attempt: job.attemptsMade, err: err?.message },
        'scan ingest attempt failed',
      );
      return;
    }
    const reason = err?.message === STALLED_OUT ? INGEST_STALLED : INGEST_GAVE_UP;
    const done = failScanForGood({ pool: deps.pool, storage }, job.data.scanId, reason)
      .then((changed) => {
        // Unchanged when the scan completed after all (a late failure event).
        if (!changed) return;
        deps.observer?.scanEnded({ format: 'unknown', outcome: 'gave_up', bytes: 0, findings: 0 });
        log.warn(
          { scanId: job.data.scanId, attempt: job.attemptsMade, err: err?.message },
          'scan failed: ingest gave up',
        );
      })
      .catch((e: unknown) => log.error({ err: e, scanId: job.data.scanId }, 'could not mark scan failed'))
      .finally(() => ending.delete(done));
    ending.add(done);
  });
  worker.on('error', (...args: unknown[]) =>
    log.warn({ err: (args[0] as Error)?.message }, 'scan ingest worker error'),
  );

  return {
    async close() {
      await worker.close();
      await Promise.allSettled([...ending]);
      if (ownsPool) await parserPool.destroy();
    },
  };
}

/**
 * A file that retrying cannot fix: a ParseError from the parser, or a parser thread that hit
 * its memory cap (which only a hostile or absurd file does).
 */
function brokenFileError(err: unknown): ScanError | null {
  if (isParseErrorLike(err))
    return { code: 'unparseable_scan', message: err.message, line: err.line, column: err.column };
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return {
      code: 'unparseable_scan',
      message: 'The scan needs more memory to parse than a parser thread may use.',
      line: null,
      column: null,
    };
  }
  return null;
}
