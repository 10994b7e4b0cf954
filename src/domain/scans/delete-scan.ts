import type { Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { AppError } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { removeScanCases } from '../cases/case-scan-removal.js';
import { recordAuditEvent } from '../keys/audit-log.js';
import type { Actor } from '../keys/key-service.js';
import { recordCaseDeliveries, type RecordedDeliveries } from '../workflows/trigger.js';

/**
 * Deleting a scan uploaded by mistake (docs/ingestion.md#deleting-a-scan): in one transaction,
 * under the scan row's lock (the lock a scan's completion takes, so the two never interleave),
 * the cases only it sighted are deleted (or, when a workflow has an open issue of one, moved to
 * `false_positive` with their `case.status_changed` deliveries recorded, so the issue closes),
 * the others recounted, the scan's row removed (its findings and evidence follow by the m017
 * triggers) and an audit event recorded. A scan that a worker may still be writing (`queued`,
 * `parsing`) is refused: 409.
 */

export interface ScanDeletion {
  scanId: string;
  findings: number;
  casesDeleted: number;
  /** Cases only it sighted that have an open issue in a workflow: kept, `false_positive`. */
  casesClosed: number;
  casesKept: number;
}

/** Deletes the workspace's scan; null when the workspace has none of that id. */
export async function deleteScan(
  pool: Pool,
  input: { workspaceId: string; scanId: string; actor: Actor },
): Promise<{ deletion: ScanDeletion; deliveries: RecordedDeliveries } | null> {
  if (!isUuid(input.scanId)) return null;
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{
      status: string;
      name: string | null;
      format: string;
      findings: number;
    }>(
      sql`SELECT status, name, format, findings_count AS findings FROM scans
           WHERE id = ${input.scanId} AND workspace_id = ${input.workspaceId} FOR UPDATE`,
    );
    const scan = rows[0];
    if (!scan) return null;
    if (scan.status === 'queued' || scan.status === 'parsing') {
      throw new AppError(
        'conflict',
        `The scan is ${scan.status}; delete it once it has completed or failed.`,
      );
    }
    const cases = await removeScanCases(tx, input.workspaceId, input.scanId, input.actor.actor);
    const deliveries = await recordCaseDeliveries(tx, input.workspaceId, cases.closed, 'case.status_changed');
    await tx.query(sql`DELETE FROM scans WHERE id = ${input.scanId}`);
    const deletion: ScanDeletion = {
      scanId: input.scanId,
      findings: scan.findings,
      casesDeleted: cases.deleted.length,
      casesClosed: cases.closed.length,
      casesKept: cases.kept,
    };
    await recordAuditEvent(tx, input.workspaceId, 'scan_delete', input.actor, {
      ...deletion,
      name: scan.name,
      format: scan.format,
    });
    return { deletion, deliveries };
  });
}
