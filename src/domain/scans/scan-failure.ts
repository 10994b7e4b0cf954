import type { Pool } from '../../db/pool.js';
import { jobIsOver, type JobStateProbe } from '../../lib/job-state.js';
import { withTransaction } from '../../db/pool.js';
import { lockScan, markScanFailed, unfinishedScanIds, type ScanError } from './scan-store.js';
import type { ScanStorage } from './scan-storage.js';
import { deleteStoredRows } from './ingest-store.js';

/**
 * How a scan ends `failed` when its file is not to blame (docs/ingestion.md#scan-status: no scan stays `queued`
 * or `parsing` for ever). Three actors may decide a scan is over: the ingest job (broken file),
 * the worker's `failed` listener (BullMQ gave up on the job) and the maintenance sweep (no job
 * will ever run it). {@link failScanForGood} is the one way they all do it.
 *
 * Invariants:
 * - A scan leaves `queued`/`parsing` once. The transition happens under the scan row's lock and
 *   only from `queued`/`parsing`, so a failure never overwrites a completion (which takes the same
 *   lock in `completeScan`) or an earlier failure and its reason.
 * - A scan that ended has no stored upload file: it is removed under the row lock before the
 *   transition commits, and again by any later call (removal is idempotent).
 */

/** The reason recorded when BullMQ ran out of attempts on an infrastructure error. */
export const INGEST_GAVE_UP: ScanError = {
  code: 'internal_error',
  message: 'The scan could not be processed; upload it again, and contact support if it keeps failing.',
  line: null,
  column: null,
};

/** The reason recorded when the parse was interrupted too often (workers crashing mid-parse). */
export const INGEST_STALLED: ScanError = {
  code: 'internal_error',
  message:
    'Parsing the scan was interrupted too many times (the worker stopped while parsing it); upload it again, and contact support if it keeps failing.',
  line: null,
  column: null,
};

/** The reason recorded by the sweep for a scan no job will ever parse. */
export const INGEST_ABANDONED: ScanError = {
  code: 'internal_error',
  message: 'The scan was not picked up for parsing (its job was lost); upload it again.',
  line: null,
  column: null,
};

/**
 * Ends a scan as `failed` with `error` if it is still `queued` or `parsing`, deleting the rows it
 * staged and removing its stored upload. Resolves true only for the call that made the change;
 * false when the scan is unknown or already completed or failed (its reason is kept; a failed
 * scan's leftover file is still removed, a completed scan's file is kept).
 */
export async function failScanForGood(
  deps: { pool: Pool; storage: ScanStorage },
  scanId: string,
  error: ScanError,
): Promise<boolean> {
  return withTransaction(deps.pool, async (tx) => {
    const scan = await lockScan(tx, scanId);
    if (!scan) return false;
    // A completed scan's raw file is kept for its retention (docs/operations.md#retention).
    if (scan.status === 'completed') return false;
    // Removed before the commit, so whoever sees the scan ended also sees its file gone; if the
    // commit fails, the parse of a scan without its file fails and ends it later.
    await deps.storage.remove(scan.storagePath);
    if (scan.status !== 'queued' && scan.status !== 'parsing') return false;
    await deleteStoredRows(tx, scanId);
    await markScanFailed(tx, scanId, error);
    return true;
  });
}

/**
 * After an attempt lost the race to end its scan (`completeScan` found it no longer `parsing`):
 * when the scan was failed meanwhile, rows this attempt wrote after the failure are deleted, so
 * a failed scan keeps nothing. A scan another attempt completed is left alone.
 */
export async function discardRowsOfFailedScan(pool: Pool, scanId: string): Promise<void> {
  await withTransaction(pool, async (tx) => {
    if ((await lockScan(tx, scanId))?.status === 'failed') await deleteStoredRows(tx, scanId);
  });
}

/** Options of {@link failStuckScans}. */
export interface StuckScanSweepDeps {
  pool: Pool;
  storage: ScanStorage;
  /** The scan-ingest queue (a scan's job id is the scan id). */
  jobs: JobStateProbe;
  /** How long a scan may be `queued`/`parsing` before the sweep looks at its job. @defaultValue 15 minutes */
  stuckAfterMs?: number;
  /** Scans examined per run; the oldest first. @defaultValue 200 */
  limit?: number;
}

const STUCK_SCAN_AFTER_MS = 15 * 60_000;

/**
 * Fails scans stuck in `queued`/`parsing` for longer than `stuckAfterMs` whose job is gone or
 * finished: an upload whose process died between storing the scan and enqueuing it, or a job
 * whose final failure never reached the `failed` listener. A scan whose job is waiting, delayed
 * or active is never touched, however old: a queue backlog or a long parse is not a failure, and
 * a job whose worker died is BullMQ's to recover (stalled jobs go back to waiting). The age bound
 * only covers the moments between insert and enqueue, and between a job failing and its
 * listener running. Returns how many scans it failed.
 */
export async function failStuckScans(deps: StuckScanSweepDeps, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - (deps.stuckAfterMs ?? STUCK_SCAN_AFTER_MS));
  let failed = 0;
  for (const id of await unfinishedScanIds(deps.pool, cutoff, deps.limit ?? 200)) {
    const state = await deps.jobs.getJobState(id);
    if (!jobIsOver(state)) continue;
    const reason = state === 'unknown' ? INGEST_ABANDONED : INGEST_GAVE_UP;
    if (await failScanForGood(deps, id, reason)) failed++;
  }
  return failed;
}
