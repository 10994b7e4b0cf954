import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { changeStatusIn } from './case-store.js';

/**
 * The cases side of deleting a scan (docs/ingestion.md#deleting-a-scan), in the deletion's
 * transaction and before the scan's findings go: a case no other completed scan sighted is
 * deleted (its histories, triage and workflow links with it), unless a workflow has an issue of
 * it that is (or may be) open: that case stays, moved to `false_positive` (reason
 * `scan_deleted`), so its issue can be closed; a case another scan sighted stays, its sightings,
 * first and last sighting recounted from the findings that remain.
 */

/** What removing a scan did to the workspace's cases. */
export interface ScanCaseRemoval {
  /** Ids of the cases deleted: only this scan had sighted them. */
  deleted: string[];
  /**
   * Ids of the cases only this scan had sighted that a workflow has an open issue of: kept,
   * `false_positive` (what the caller tells the workflows, so the issues close).
   */
  closed: string[];
  /** Cases kept (another completed scan sighted them), recounted. */
  kept: number;
}

export async function removeScanCases(
  tx: Db,
  workspaceId: string,
  scanId: string,
  actor: string,
): Promise<ScanCaseRemoval> {
  const { rows } = await tx.query<{ id: string; only: boolean; linked: boolean }>(
    sql`SELECT c.id, NOT EXISTS (
              SELECT 1 FROM findings o JOIN scans os ON os.id = o.scan_id AND os.status = 'completed'
               WHERE o.workspace_id = c.workspace_id AND o.fingerprint = c.fingerprint AND o.scan_id <> ${scanId}
            ) AS only,
            EXISTS (
              -- An issue that exists, or whose create may have reached the tracker, not closed yet.
              SELECT 1 FROM workflow_links l
               WHERE l.case_id = c.id AND l.remote_state = 'open'
                 AND (l.external_id IS NOT NULL OR l.create_attempts > 0)
            ) AS linked
          FROM cases c
         WHERE c.workspace_id = ${workspaceId}
           AND c.fingerprint IN (SELECT DISTINCT fingerprint FROM findings WHERE scan_id = ${scanId})
         ORDER BY c.fingerprint
           FOR UPDATE OF c`,
  );
  const deleted = rows.filter((r) => r.only && !r.linked).map((r) => r.id);
  const closed = rows.filter((r) => r.only && r.linked).map((r) => r.id);
  const kept = rows.filter((r) => !r.only).map((r) => r.id);
  if (deleted.length > 0) await tx.query(sql`DELETE FROM cases WHERE id = ANY(${deleted}::uuid[])`);
  for (const caseId of closed)
    await changeStatusIn(tx, {
      workspaceId,
      caseId,
      status: 'false_positive',
      actor,
      reason: 'scan_deleted',
      note: `The only scan that sighted it (${scanId}) was deleted.`,
      expiresAt: null,
    });
  if (kept.length > 0) {
    await tx.query(
      sql`UPDATE cases c SET sightings = agg.n, first_seen = agg.first_at, last_seen = agg.last_at,
                 first_scan_id = agg.first_scan, last_scan_id = agg.last_scan, updated_at = now()
            FROM (SELECT f.fingerprint, count(*)::int AS n, min(f.created_at) AS first_at, max(f.created_at) AS last_at,
                         (array_agg(f.scan_id ORDER BY f.seq))[1] AS first_scan,
                         (array_agg(f.scan_id ORDER BY f.seq DESC))[1] AS last_scan
                    FROM findings f JOIN scans s ON s.id = f.scan_id AND s.status = 'completed'
                   WHERE f.workspace_id = ${workspaceId} AND f.scan_id <> ${scanId}
                     AND f.fingerprint IN (SELECT fingerprint FROM cases WHERE id = ANY(${kept}::uuid[]))
                   GROUP BY f.fingerprint) agg
           WHERE c.workspace_id = ${workspaceId} AND c.fingerprint = agg.fingerprint`,
    );
  }
  return { deleted, closed, kept: kept.length };
}
