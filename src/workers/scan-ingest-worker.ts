import type { Job } from 'bullmq';
import { isFinalFailure } from '../lib/job-state.js';
import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import type { Pool } from '../db/pool.js';
import type { QueueKit } from '../jobs/queue-kit.js';
import {
  SCAN_INGEST_QUEUE,
  ScanAlreadyFailed,
  scanIngestProcessor,
  type ScanIngestPayload,
  type ScanIngestResult,
} from '../jobs/scan-ingest.js';
import { createParserPool, parseFileInPool, parseStreamInPool, type ParserPool } from './parser-pool.js';
import { createLocalScanStorage, type ScanStorage } from '../domain/scans/scan-storage.js';
import { abandonIngest, type IngestScanDeps } from '../domain/scans/ingest-scan.js';

/** BullMQ's reason for a job that stalled more than `maxStalledCount` times (both backends). */
const STALLED_OUT = 'job stalled more than allowable limit';

/** Options of {@link startScanIngestWorker}. */
export interface ScanIngestWorkerDeps extends Pick<
  IngestScanDeps,
  'batchSize' | 'observer' | 'triageScan' | 'afterScan'
> {
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
  /** How long a job's lock lives without renewal before another worker may take it over. @defaultValue 30000 */
  lockDurationMs?: number;
  /** How often this worker looks for jobs whose worker died. @defaultValue 30000 */
  stalledIntervalMs?: number;
}

/**
 * The `scan-ingest` BullMQ worker: a thin adapter that runs the ingest use case
 * (`domain/scans/ingest-scan.ts`) with the parse in the Piscina parser threads.
 *
 * A broken file fails its scan inside the use case and its job ends unrecoverable; anything else
 * is rethrown and retried. Every final failure of a job (attempts used up, or stalled out: see
 * {@link isFinalFailure}) fails its scan and removes its file, once (`abandonIngest`), so no scan
 * stays `parsing` for ever.
 */
export function startScanIngestWorker(deps: ScanIngestWorkerDeps): { close(): Promise<void> } {
  const storage = deps.storage ?? createLocalScanStorage(deps.config.scanStorageDir);
  const parserPool = deps.parserPool ?? createParserPool({ maxThreads: deps.config.parserThreads });
  const ownsPool = !deps.parserPool;
  const log = deps.logger.child({ queue: SCAN_INGEST_QUEUE });

  const ingest: IngestScanDeps = {
    pool: deps.pool,
    storage,
    logger: log,
    // Parsed in the Piscina threads; the pool's ack protocol is the backpressure.
    // A local file is opened by the thread itself; object storage streams in through a port.
    parse: ({ key, ...request }, onBatch) =>
      storage.localPath
        ? parseFileInPool(parserPool, { ...request, path: storage.localPath(key) }, onBatch)
        : parseStreamInPool(parserPool, storage.open(key), request, onBatch),
    batchSize: deps.batchSize,
    observer: deps.observer,
    triageScan: deps.triageScan,
    afterScan: deps.afterScan,
  };

  const worker = deps.queues.worker<ScanIngestPayload, ScanIngestResult>(
    SCAN_INGEST_QUEUE,
    scanIngestProcessor(ingest),
    {
      concurrency: deps.concurrency ?? deps.config.parserThreads,
      lockDuration: deps.lockDurationMs ?? 30_000,
      stalledInterval: deps.stalledIntervalMs ?? 30_000,
      maxStalledCount: 3,
    },
  );
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
    const why = err?.message === STALLED_OUT ? 'stalled' : 'gave_up';
    const done = abandonIngest(ingest, job.data.scanId, why)
      .then((changed) => {
        // Unchanged when the scan completed after all (a late failure event).
        if (!changed) return;
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
