import type { Queryable } from '../db/pool.js';
import type { InvalidationBus } from './keys/invalidation-bus.js';
import type { QuotaService } from './usage/quota.js';
import { failStuckScans, type StuckScanSweepDeps } from './scans/scan-failure.js';
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
}

/**
 * Housekeeping that makes stored state match what the clock already decides: keys past
 * expiry or grace become `expired` (with an audit event), sealed reveal secrets older
 * than their link are wiped, ended trials are recorded as a plan change to `free`, and
 * quota reservations of crashed processes are given back, scans no job will ever parse are
 * failed (DECISIONS §8; `failStuckScans`), and batches nothing else would finish are finished
 * (DECISIONS §7; `failStuckBatches`). Idempotent; safe to run concurrently (each statement
 * is one atomic step, and a scan is failed under its row lock).
 */
export async function runMaintenance(deps: {
  db: Queryable;
  quota: QuotaService;
  bus: InvalidationBus | null;
  clock: () => Date;
  /** The stuck-scan sweep's queue probe and storage; the step is skipped without them. */
  scans?: StuckScanSweepDeps;
  /** The stuck-batch sweep's queue probe and webhook delivery; the step is skipped without them. */
  batches?: StuckBatchSweepDeps;
}): Promise<MaintenanceReport> {
  const now = deps.clock();
  const reservationsReleased = await deps.quota.releaseExpired();
  const expired = await deps.db.query<{ id: string }>(
    `WITH gone AS (
       UPDATE api_keys SET state = 'expired'
        WHERE state IN ('active', 'rotating')
          AND ((expires_at IS NOT NULL AND expires_at <= $1) OR (state = 'rotating' AND grace_ends_at <= $1))
        RETURNING id, workspace_id
     ), audit AS (
       INSERT INTO key_audit_events (workspace_id, key_id, action, actor, at)
       SELECT workspace_id, id, 'expire', 'system', $1 FROM gone
     )
     SELECT id FROM gone`,
    [now],
  );
  for (const row of expired.rows) await deps.bus?.publish({ kind: 'key', id: row.id });
  const wiped = await deps.db.query(
    `UPDATE key_reveals SET sealed_secret = NULL WHERE sealed_secret IS NOT NULL AND expires_at <= $1`,
    [now],
  );
  const trials = await deps.db.query<{ id: string }>(
    `WITH ended AS (
       UPDATE workspaces SET plan = 'free' WHERE plan = 'trial' AND trial_ends_at <= $1 RETURNING id
     ), changes AS (
       INSERT INTO plan_changes (workspace_id, from_plan, to_plan, reason, actor, at)
       SELECT id, 'trial', 'free', 'trial_ended', 'system', $1 FROM ended
     )
     SELECT id FROM ended`,
    [now],
  );
  for (const row of trials.rows) await deps.bus?.publish({ kind: 'workspace', id: row.id });
  // Last: it asks the queue about each candidate, and a queue outage must not hold up the rest.
  const scansFailed = deps.scans ? await failStuckScans(deps.scans, now) : 0;
  const batches = deps.batches
    ? await failStuckBatches(deps.batches, now)
    : { itemsFailed: 0, batchesFinished: 0, webhooksResent: 0 };
  return {
    reservationsReleased,
    keysExpired: expired.rowCount ?? 0,
    revealsWiped: wiped.rowCount ?? 0,
    trialsEnded: trials.rowCount ?? 0,
    scansFailed,
    batches,
  };
}
