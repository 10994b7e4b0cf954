import type { Db } from '../db/pool.js';
import { expireDueKeys, wipeExpiredReveals } from './keys/keys-store.js';
import { endDueTrials } from './workspaces/workspace-store.js';
import type { InvalidationBus } from './keys/invalidation-bus.js';
import type { QuotaService } from './usage/quota.js';
import { failStuckScans, type StuckScanSweepDeps } from './scans/scan-failure.js';
import { sweepStorage, type StorageSweepReport } from './scans/storage-sweep.js';
import type { ScanStorage } from './scans/scan-storage.js';
import { existingScanIds } from './scans/scan-store.js';
import { removeExpiredScanFiles } from './scans/file-retention.js';
import { existingExportIds } from './exports/export-store.js';
import { expireAcceptances } from './cases/acceptance-expiry.js';
import type { CaseChangeDeliveries } from './cases/case-deliveries.js';
import type { RecordedDeliveries } from './workflows/trigger.js';
import { failStuckBatches, type BatchSweepReport, type StuckBatchSweepDeps } from './triage/batch-sweep.js';

export interface MaintenanceReport {
  reservationsReleased: number;
  keysExpired: number;
  revealsWiped: number;
  trialsEnded: number;
  /** Scans stuck in `queued`/`parsing` whose job is gone or finished, now `failed`. */
  scansFailed: number;
  /** Batches nothing else would finish (`failStuckBatches`); zeros when the step is skipped. */
  batches: BatchSweepReport;
  /** Exports past their 24 h, removed with their files. */
  exportsExpired: number;
  /** Dead `.part` files and stored files no scan or export owns, removed (docs/ingestion.md#upload-bounds). */
  storage: StorageSweepReport;
  /** Pending workflow deliveries whose job was lost, queued again (docs/workflows.md). */
  deliveriesRequeued: number;
  /** Workspace removals not finished, queued again (docs/operations.md#end-of-life). */
  deletionsRequeued: number;
  /** Cases past their due date whose breach was told to the workflows (docs/cases.md#due-dates-and-sla). */
  slaBreaches: number;
  /** Raw scan files past their workspace's retention, removed (docs/operations.md#retention). */
  scanFilesRemoved: number;
  /** Risk acceptances past their expiry, their cases reopened (docs/cases.md#risk-acceptance). */
  acceptancesExpired: number;
}

/**
 * Housekeeping that makes stored state match what the clock already decides: keys past
 * expiry or grace become `expired` (with an audit event), sealed reveal secrets older
 * than their link are wiped, ended trials are recorded as a plan change to `free`, and
 * quota reservations of crashed processes are given back, scans no job will ever parse are
 * failed (docs/ingestion.md#scan-status; `failStuckScans`), and batches nothing else would finish are finished
 * (docs/triage.md#batch-triage; `failStuckBatches`), and workflow deliveries whose job a queue lost are queued
 * again (docs/workflows.md#exactly-one-issue-per-case; `requeueLostDeliveries`), SLA breaches are
 * told to the workflows once each (docs/cases.md#due-dates-and-sla; `announceSlaBreaches`), unfinished
 * workspace removals are queued again (docs/operations.md#end-of-life), and raw scan files past their
 * workspace's retention are removed (docs/operations.md#retention). Idempotent; safe to run
 * concurrently (each statement is one atomic step, a scan is failed under its row lock, a breach is
 * claimed under its row lock, and retention claims its scans with SKIP LOCKED); risk acceptances past
 * their expiry reopen their cases (docs/cases.md#risk-acceptance; `expireAcceptances`, SKIP LOCKED).
 */
export async function runMaintenance(deps: {
  db: Db;
  quota: QuotaService;
  bus: InvalidationBus | null;
  clock: () => Date;
  /** The stuck-scan sweep's queue probe and storage; the step is skipped without them. */
  scans?: StuckScanSweepDeps;
  /** The stuck-batch sweep's queue probe and webhook delivery; the step is skipped without them. */
  batches?: StuckBatchSweepDeps;
  /** Removes expired exports and their files; the step is skipped without it. */
  exports?: { sweepExpired(): Promise<number> };
  /**
   * Scan storage (uploads and export files) for the orphan sweep, and how old a `.part` file
   * may get (the longest upload allowed); the step is skipped without it.
   */
  storage?: { storage: ScanStorage; partMaxAgeMs?: number; partIdleMs?: number; orphanAfterMs?: number };
  /**
   * Re-queues workflow deliveries whose job was lost (`requeueLostDeliveries`, idempotent by
   * job id); the step is skipped without it.
   */
  deliveries?: { requeueLost(): Promise<number> };
  /** Queues again the removals of deleted workspaces not finished; the step is skipped without it. */
  deletions?: { requeueUnfinished(): Promise<number> };
  /**
   * Tells the workflows of each SLA breach not yet told (`announceSlaBreaches`, exactly once per
   * breach across processes); the step is skipped without it.
   */
  slaBreaches?: { announce(now: Date): Promise<{ breaches: number }> };
  /** Scan storage for the scan file retention (`removeExpiredScanFiles`); the step is skipped without it. */
  scanFiles?: { storage: ScanStorage };
  /**
   * Records, in the transaction that reopens them, the `case.status_changed` deliveries of cases
   * whose risk acceptance expired (`recordCaseDeliveries`) and queues them after it commits; the
   * expiry step is skipped without it.
   */
  acceptances?: CaseChangeDeliveries<RecordedDeliveries>;
}): Promise<MaintenanceReport> {
  const now = deps.clock();
  const reservationsReleased = await deps.quota.releaseExpired();
  const expired = await expireDueKeys(deps.db, now);
  for (const id of expired) await deps.bus?.publish({ kind: 'key', id });
  const revealsWiped = await wipeExpiredReveals(deps.db, now);
  const trials = await endDueTrials(deps.db, now);
  for (const id of trials) await deps.bus?.publish({ kind: 'workspace', id });
  // Last: it asks the queue about each candidate, and a queue outage must not hold up the rest.
  const scansFailed = deps.scans ? await failStuckScans(deps.scans, now) : 0;
  const batches = deps.batches
    ? await failStuckBatches(deps.batches, now)
    : { itemsFailed: 0, batchesFinished: 0, webhooksResent: 0 };
  const exportsExpired = deps.exports ? await deps.exports.sweepExpired() : 0;
  const slaBreaches = deps.slaBreaches ? (await deps.slaBreaches.announce(now)).breaches : 0;
  const deliveriesRequeued = deps.deliveries ? await deps.deliveries.requeueLost() : 0;
  const deletionsRequeued = deps.deletions ? await deps.deletions.requeueUnfinished() : 0;
  const acceptancesExpired = deps.acceptances ? await expireAcceptances(deps.db, now, deps.acceptances) : 0;
  const scanFilesRemoved = deps.scanFiles
    ? await removeExpiredScanFiles({ db: deps.db, storage: deps.scanFiles.storage }, now)
    : 0;
  // After the export sweep: files of exports it just expired are already gone with their rows.
  const storage = deps.storage
    ? await sweepStorage(
        {
          ...deps.storage,
          owned: async (ids) => {
            const scans = await existingScanIds(deps.db, ids);
            const rest = ids.filter((id) => !scans.has(id));
            const exports = await existingExportIds(deps.db, rest);
            return new Set([...scans, ...exports]);
          },
        },
        now,
      )
    : { partialsRemoved: 0, orphansRemoved: 0 };
  return {
    storage,
    reservationsReleased,
    keysExpired: expired.length,
    revealsWiped,
    trialsEnded: trials.length,
    exportsExpired,
    scansFailed,
    batches,
    deliveriesRequeued,
    deletionsRequeued,
    slaBreaches,
    scanFilesRemoved,
    acceptancesExpired,
  };
}
