import { withTransaction, type Db, type Pool } from '../../db/pool.js';
import type { PlanName } from '../../db/entities/index.js';
import { sql } from '../../db/sql.js';
import type { ScanTriageMode } from '../scans/scan-store.js';
import type { Priority, TriageRequest } from '../triage-engine/types.js';
import { findBatch, type BatchRow } from './batch-store.js';

/**
 * The SQL of case triage's batches: case batches (batch records whose items name their case) and
 * the triage state of a scan (`scans.triage*`). Which cases a scan or a selection names, and what
 * their requests are built from, is read in `domain/cases` (`case-candidates.ts`,
 * `case-triage-source.ts`). A scan's triage batch has the scan's id, so
 * `GET /api/v1/triage/batch/<scanId>` shows its items.
 */

/** A scan as its triage needs it: whose, billed to which key, in which mode, and its workspace's plan. */
export interface ScanForTriage {
  id: string;
  workspaceId: string;
  keyId: string | null;
  status: string;
  mode: ScanTriageMode;
  /** Null until the scan's triage was accepted (its cases chosen and their AI calls reserved). */
  requested: number | null;
  skipped: number | null;
  workspace: { plan: PlanName; trialEndsAt: Date | null };
}

export async function scanForTriage(db: Db, scanId: string): Promise<ScanForTriage | null> {
  const { rows } = await db.query<{
    id: string;
    workspace_id: string;
    key_id: string | null;
    status: string;
    triage: ScanTriageMode;
    triage_requested: number | null;
    triage_skipped: number | null;
    plan: PlanName;
    trial_ends_at: Date | null;
  }>(
    sql`SELECT s.id, s.workspace_id, s.key_id, s.status, s.triage, s.triage_requested, s.triage_skipped,
            w.plan, w.trial_ends_at
       FROM scans s JOIN workspaces w ON w.id = s.workspace_id WHERE s.id = ${scanId}`,
  );
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    keyId: r.key_id,
    status: r.status,
    mode: r.triage,
    requested: r.triage_requested,
    skipped: r.triage_skipped,
    workspace: { plan: r.plan, trialEndsAt: r.trial_ends_at },
  };
}

/** Records how many cases a scan's triage chose and skipped, once; false when already recorded. */
async function markScanTriage(
  db: Db,
  scanId: string,
  counts: { requested: number; skipped: number },
): Promise<boolean> {
  const res = await db.query(
    sql`UPDATE scans SET triage_requested = ${counts.requested}, triage_skipped = ${counts.skipped}
         WHERE id = ${scanId} AND triage_requested IS NULL`,
  );
  return res.rowCount === 1;
}

/** A scan's triage that has nothing to run (no case, or no AI call left): its counts only. */
export async function recordScanTriageWithoutBatch(
  db: Db,
  scanId: string,
  counts: { requested: number; skipped: number },
): Promise<boolean> {
  return markScanTriage(db, scanId, counts);
}

/**
 * Stores a case batch: a batch record whose items carry their case, holding `reservationId`,
 * and — for a scan's triage — the scan's counts, in one transaction. False (nothing stored) when
 * the scan's triage was already recorded by another attempt.
 */
export async function createCaseBatch(
  pool: Pool,
  input: {
    id: string;
    workspaceId: string;
    keyId: string;
    items: readonly { caseId: string; request: TriageRequest }[];
    reservationId: string;
    at: Date;
    scan: { id: string; requested: number; skipped: number } | null;
  },
): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    if (input.scan && !(await markScanTriage(tx, input.scan.id, input.scan))) return false;
    await tx.query(
      sql`INSERT INTO triage_batches (id, workspace_id, key_id, status, total, reservation_id, created_at)
          VALUES (${input.id}, ${input.workspaceId}, ${input.keyId}, 'queued', ${input.items.length},
                  ${input.reservationId}, ${input.at})`,
    );
    const requests = input.items.map((i) => JSON.stringify(i.request));
    const caseIds = input.items.map((i) => i.caseId);
    await tx.query(
      sql`INSERT INTO triage_batch_items (batch_id, index, status, request, case_id)
          SELECT ${input.id}, i - 1, 'queued', r, c
            FROM unnest(${requests}::jsonb[], ${caseIds}::uuid[]) WITH ORDINALITY AS t(r, c, i)`,
    );
    return true;
  });
}

/** The triage batch of a scan (its id is the scan's), or null. */
export async function scanTriageBatch(
  db: Db,
  scan: { id: string; workspaceId: string },
): Promise<BatchRow | null> {
  return findBatch(db, scan.workspaceId, scan.id);
}

/**
 * What `GET /api/pipeline/scan/:id` shows of a scan's triage (docs/cases.md#case-triage), null when the upload
 * asked for none. `status`: `pending` until the scan completed and its cases were chosen;
 * `running` while its batch runs; `completed` once every chosen case was answered or failed (or
 * none was to be triaged); `cancelled` when the scan failed. `requested` counts the cases the
 * option named, `skippedForQuota` those left out because the month's AI calls ran out.
 */
export interface ScanTriageView {
  status: 'pending' | 'running' | 'completed' | 'cancelled';
  requested: number;
  answered: number;
  failed: number;
  skippedForQuota: number;
  /** The scan's triage batch (`GET /api/v1/triage/batch/:id`), when one runs. */
  batchId: string | null;
}

export async function scanTriageView(
  db: Db,
  scan: { id: string; workspaceId: string },
): Promise<ScanTriageView | null> {
  const { rows } = await db.query<{
    status: string;
    triage: ScanTriageMode;
    triage_requested: number | null;
    triage_skipped: number | null;
    batch_id: string | null;
    completed: number | null;
    failed: number | null;
    finished_at: Date | null;
  }>(
    sql`SELECT s.status, s.triage, s.triage_requested, s.triage_skipped, b.id AS batch_id, b.completed, b.failed,
            b.finished_at
       FROM scans s LEFT JOIN triage_batches b ON b.id = s.id AND b.workspace_id = s.workspace_id
      WHERE s.id = ${scan.id} AND s.workspace_id = ${scan.workspaceId}`,
  );
  const r = rows[0];
  if (!r || r.triage === 'none') return null;
  const counts = {
    requested: r.triage_requested ?? 0,
    answered: r.completed ?? 0,
    failed: r.failed ?? 0,
    skippedForQuota: r.triage_skipped ?? 0,
    batchId: r.batch_id,
    byPriority: {},
  };
  if (r.status === 'failed') return { status: 'cancelled', ...counts };
  if (r.triage_requested === null) return { status: 'pending', ...counts };
  if (r.batch_id !== null && r.finished_at === null) return { status: 'running', ...counts };
  if (r.batch_id !== null && (r.completed ?? 0) > 0)
    counts.byPriority = await answeredByPriority(db, r.batch_id);
  return { status: 'completed', ...counts };
}

/** The cases a finished case-triage batch answered, counted by their current priority. */
async function answeredByPriority(db: Db, batchId: string): Promise<Partial<Record<Priority, number>>> {
  const { rows } = await db.query<{ priority: Priority; n: number }>(
    sql`SELECT c.priority, count(*)::int AS n
       FROM triage_batch_items i JOIN cases c ON c.id = i.case_id
      WHERE i.batch_id = ${batchId} AND i.status = 'completed' AND c.priority IS NOT NULL
      GROUP BY c.priority`,
  );
  return Object.fromEntries(rows.map((r) => [r.priority, r.n]));
}
