import type { Pool } from '../../db/pool.js';
import type { Logger } from '../../lib/logger.js';
import { isParseErrorLike, type Finding, type ParseResult, type ScanFormat } from '../../parsers/index.js';
import { completeScan } from './ingest-store.js';
import { INGEST_GAVE_UP, INGEST_STALLED, discardRowsOfFailedScan, failScanForGood } from './scan-failure.js';
import type { ScanStorage } from './scan-storage.js';
import { getScan, startParsing, type ScanError } from './scan-store.js';
import { openScanWriter } from './scan-writer.js';

/**
 * The ingest use case: a stored scan file becomes findings, evidence and cases, and its scan
 * ends `completed` or `failed` (docs/ingestion.md). The queue job that runs it is a thin adapter
 * (`jobs/scan-ingest.ts`); the parse itself is a dependency, so the worker runs it in the parser
 * threads and a test may run it in process.
 *
 * A batch is acknowledged once it is encoded and queued, and the writer's bounded queue holds the
 * parser back (file read → parser → encoder → database), so parsing and writing overlap while
 * memory stays bounded by a few batches. Every write is keyed by (scan, record index), so running
 * the use case again for the same scan (a retried job) never duplicates.
 */

/** What the parse of a stored scan file is asked for. */
export interface StoredScanParse {
  /** The file's storage key: the parser reads it from the store, by path or as a stream. */
  key: string;
  format: ScanFormat;
  /** Stored files are kept decompressed. */
  gzip: false;
  batchSize: number;
  uploadAsset: string | null;
}

/**
 * Parses a stored file, calling `onBatch` once per batch, in order, never concurrently, and
 * waiting for it before reading far ahead. Rejects with a ParseError-like value (matched by
 * `name`/`code`: it may cross a thread boundary) for a broken file.
 */
export type ParseStoredScan = (
  request: StoredScanParse,
  onBatch: (batch: Finding[], info: { bytesRead: number }) => Promise<void>,
) => Promise<ParseResult>;

/** Sees each scan the ingest ends: parsed (its bytes and findings), unparseable, or given up. */
export interface ScanIngestObserver {
  scanEnded(scan: {
    format: string;
    outcome: 'completed' | 'unparseable' | 'gave_up';
    bytes: number;
    findings: number;
  }): void;
}

/** What {@link ingestScan} runs on. */
export interface IngestScanDeps {
  pool: Pool;
  storage: ScanStorage;
  parse: ParseStoredScan;
  logger: Logger;
  /** Findings per persisted batch. @defaultValue 1000 */
  batchSize?: number;
  /** Told how each scan ended (Prometheus metrics). @defaultValue none */
  observer?: ScanIngestObserver;
  /**
   * Starts the triage a completed scan's upload asked for (`triage=new|all`); idempotent per
   * scan. Its failure fails the ingest, so a retry starts the triage again.
   * @defaultValue none (no case triage)
   */
  triageScan?: (scanId: string) => Promise<void>;
  /**
   * Called once a scan completed, with its workspace and id — and again by a retried job that
   * finds it completed (its attempt may have died just after the commit): queues the workflow
   * deliveries its completion recorded that are still pending (the maintenance sweep queues them
   * if this never runs). Its failure is logged, never fails the scan.
   * @defaultValue none
   */
  afterScan?: (workspaceId: string, scanId: string) => Promise<unknown>;
}

/** How one run of {@link ingestScan} ended. */
export type IngestOutcome =
  /** The scan had already ended (another attempt completed or failed it). */
  | { kind: 'skipped' }
  | { kind: 'completed'; scanId: string; findings: number }
  /** The file is broken: the scan is failed for good with the parser's reason and position. */
  | { kind: 'unparseable'; error: ScanError };

/**
 * Ingests one stored scan. A broken file (a ParseError, or a parser thread that hit its memory
 * cap) fails the scan for good and resolves `unparseable`, since retrying cannot fix it; anything
 * else (database, a crash) rejects, and the caller retries.
 */
export async function ingestScan(
  deps: IngestScanDeps,
  job: { scanId: string; workspaceId: string },
): Promise<IngestOutcome> {
  const scan = await startParsing(deps.pool, job.scanId);
  if (!scan) {
    // Completed (its file is kept until the workspace's retention removes it,
    // docs/operations.md#retention), failed (its file went with it) or gone (the orphan sweep
    // removes a file no scan owns). Completed by an attempt that may have died after the
    // commit, before queuing the deliveries its completion recorded or starting its triage.
    if ((await getScan(deps.pool, job.workspaceId, job.scanId))?.status === 'completed')
      await queueScanDeliveries(deps, job.workspaceId, job.scanId);
    await deps.triageScan?.(job.scanId);
    return { kind: 'skipped' };
  }
  const writer = await openScanWriter(deps.pool, {
    id: scan.id,
    workspaceId: scan.workspaceId,
    uploadAsset: scan.asset.name,
  });
  let result: ParseResult;
  try {
    try {
      result = await deps.parse(
        {
          key: scan.storagePath,
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
  } catch (err) {
    const broken = brokenFileError(err);
    if (!broken) throw err;
    await failScanForGood(deps, scan.id, broken);
    deps.logger.info({ scanId: scan.id, error: broken }, 'scan failed: unparseable');
    deps.observer?.scanEnded({ format: scan.format, outcome: 'unparseable', bytes: 0, findings: 0 });
    return { kind: 'unparseable', error: broken };
  }
  const completed = await completeScan(deps.pool, scan.id, {
    bytes: result.bytes,
    notes: result.notes,
    scope: result.scope,
  });
  // Lost the race: the scan was failed (e.g. this job stalled out while still running) or
  // another attempt completed it. Only a failed scan's late rows are dropped.
  if (!completed) await discardRowsOfFailedScan(deps.pool, scan.id);
  else await queueScanDeliveries(deps, scan.workspaceId, scan.id);
  // A completed scan keeps its raw file until the workspace's retention removes it
  // (docs/operations.md#retention); a failed one keeps nothing.
  if (!completed) await deps.storage.remove(scan.storagePath);
  // Only a completed scan is triaged (triageScan checks), whichever attempt completed it.
  await deps.triageScan?.(scan.id);
  deps.logger.info(
    { scanId: scan.id, findings: result.count, bytes: result.bytes, resumedAt: writer.resumeAt },
    'scan ingested',
  );
  deps.observer?.scanEnded({
    format: scan.format,
    outcome: 'completed',
    bytes: result.bytes,
    findings: result.count,
  });
  return { kind: 'completed', scanId: scan.id, findings: result.count };
}

/**
 * Queues the deliveries a completed scan's completion recorded (`afterScan`); queuing again what
 * an earlier attempt queued is harmless (a delivery's job id is its id). A failure is logged: the
 * maintenance sweep queues them (docs/workflows.md#when-deliveries-happen).
 */
async function queueScanDeliveries(
  deps: Pick<IngestScanDeps, 'afterScan' | 'logger'>,
  workspaceId: string,
  scanId: string,
): Promise<void> {
  await deps
    .afterScan?.(workspaceId, scanId)
    .catch((err: unknown) =>
      deps.logger.warn({ scanId, err: (err as Error)?.message }, 'workflows not triggered for the scan'),
    );
}

/**
 * The ingest of a scan was given up by its runner (attempts used up, or interrupted too often):
 * the scan fails for good and its file is removed, once. Resolves true for the call that ended
 * it; false when the scan had ended already (a late report after it completed).
 */
export async function abandonIngest(
  deps: Pick<IngestScanDeps, 'pool' | 'storage' | 'observer'>,
  scanId: string,
  why: 'stalled' | 'gave_up',
): Promise<boolean> {
  const changed = await failScanForGood(deps, scanId, why === 'stalled' ? INGEST_STALLED : INGEST_GAVE_UP);
  if (changed) deps.observer?.scanEnded({ format: 'unknown', outcome: 'gave_up', bytes: 0, findings: 0 });
  return changed;
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
