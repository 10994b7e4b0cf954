import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';

/**
 * The cases side of deleting a scan (docs/ingestion.md#deleting-a-scan), in the deletion's
 * transaction and before the scan's findings go: a case no other completed scan sighted is
 * deleted (its histories, triage and workflow links with it); a case another scan sighted stays,
 * its sightings, first and last sighting recounted from the findings that remain.
 */

/** What removing a scan did to the workspace's cases. */
export interface ScanCaseRemoval {
  /** Ids of the cases deleted: only this scan had sighted them. */
  deleted: string[];
  /** Cases kept (another completed scan sighted them), recounted. */
  kept: number;
}

export async function removeScanCases(tx: Db, workspaceId: string, scanId: string): Promise<ScanCaseRemoval> {
  const { rows } = await tx.query<{ id: string; only: boolean }>(
    sql`SELECT c.id, NOT EXISTS (
              SELECT 1 FROM findings o JOIN scans os ON os.id = o.scan_id AND os.status = 'completed'
               WHERE o.workspace_id = c.workspace_id AND o.fingerprint = c.fingerprint AND o.scan_id <> ${scanId}
            ) AS only
          FROM cases c
         WHERE c.workspace_id = ${workspaceId}
           AND c.fingerprint IN (SELECT DISTINCT fingerprint FROM findings WHERE scan_id = ${scanId})
         ORDER BY c.fingerprint
           FOR UPDATE OF c`,
  );
  const deleted = rows.filter((r) => r.only).map((r) => r.id);
  const kept = rows.filter((r) => !r.only).map((r) => r.id);
  if (deleted.length > 0) await tx.query(sql`DELETE FROM cases WHERE id = ANY(${deleted}::uuid[])`);
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
  return { deleted, kept: kept.length };
}
