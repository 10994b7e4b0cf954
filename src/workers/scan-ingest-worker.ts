import { UnrecoverableError, type Job } from 'bullmq';
import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import type { Pool } from '../db/pool.js';
import type { QueueKit } from '../jobs/queue-kit.js';
import { SCAN_INGEST_QUEUE, type ScanIngestPayload } from '../jobs/scan-ingest.js';
import { isParseErrorLike } from '../parsers/index.js';
import { createParserPool, parseFileInPool, type ParserPool } from './parser-pool.js';
import { createLocalScanStorage, type ScanStorage } from '../domain/scans/scan-storage.js';
import { completeScan, failScan, startParsing } from '../domain/scans/findings-store.js';
import { openScanWriter } from '../domain/scans/scan-writer.js';
import type { ScanError } from '../domain/scans/scan-records.js';

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
 * every write is keyed by (scan, record index) a retry never duplicates. A job that runs out
 * of attempts fails its scan too, so no scan stays `parsing` for ever.
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
      return { skipped: true };
    }
    const file = storage.localPath(scan.storage_path);
    const writer = await openScanWriter(deps.pool, { id: scan.id, workspaceId: scan.workspace_id });
    try {
      let result;
      try {
        result = await parseFileInPool(
          parserPool,
          { path: file, format: scan.format, gzip: false, batchSize: deps.batchSize ?? 1000 },
          (batch, info) => writer.write(batch, info.bytesRead),
        );
        await writer.flush();
      } finally {
        await writer.close();
      }
      await completeScan(deps.pool, scan.id, { bytes: result.bytes, notes: result.notes });
      await storage.remove(scan.storage_path);
      log.info(
        { scanId: scan.id, findings: result.count, bytes: result.bytes, resumedAt: writer.resumeAt },
        'scan ingested',
      );
      return { scanId: scan.id, findings: result.count };
    } catch (err) {
      const broken = brokenFileError(err);
      if (!broken) throw err;
      await failScan(deps.pool, scan.id, broken);
      await storage.remove(scan.storage_path);
      log.info({ scanId: scan.id, error: broken }, 'scan failed: unparseable');
      throw new UnrecoverableError(broken.message);
    }
  }

  const worker = deps.queues.worker<ScanIngestPayload, unknown>(SCAN_INGEST_QUEUE, ingest, {
    concurrency: deps.concurrency ?? deps.config.parserThreads,
    lockDuration: deps.lockDurationMs ?? 30_000,
    stalledInterval: deps.stalledIntervalMs ?? 30_000,
    maxStalledCount: 3,
  });
  worker.on('failed', (...args: unknown[]) => {
    const [job, err] = args as [Job<ScanIngestPayload> | undefined, Error];
    if (!job || err instanceof UnrecoverableError || err?.name === 'UnrecoverableError') return;
    const final = job.attemptsMade >= (job.opts.attempts ?? 1);
    log.warn(
      { scanId: job.data.scanId, attempt: job.attemptsMade, final, err: err?.message },
      'scan ingest attempt failed',
    );
    if (final) {
      void failScan(deps.pool, job.data.scanId, {
        code: 'internal_error',
        message: 'The scan could not be processed; upload it again, and contact support if it keeps failing.',
        line: null,
        column: null,
      }).catch((e: unknown) => log.error({ err: e }, 'could not mark scan failed'));
    }
  });
  worker.on('error', (...args: unknown[]) =>
    log.warn({ err: (args[0] as Error)?.message }, 'scan ingest worker error'),
  );

  return {
    async close() {
      await worker.close();
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
