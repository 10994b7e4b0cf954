import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';

/**
 * Reads of a workspace's archive (docs/operations.md#workspace-archive), in keyset pages by id so
 * a workspace of any size is read with bounded memory. They read other areas' tables (the cases'
 * histories, the keys' audit log) as they are stored: the archive is the workspace's own record of
 * them, not a view of one area.
 */

export interface HistoryPage<T> {
  rows: T[];
  /** The id to continue after, or null at the end. */
  next: string | null;
}

const PAGE = 1000;

function paged<T extends { id: string }>(rows: T[]): HistoryPage<T> {
  return { rows, next: rows.length === PAGE ? rows[rows.length - 1]!.id : null };
}

export async function caseStatusHistoryPage(
  db: Db,
  workspaceId: string,
  after: string,
): Promise<HistoryPage<Record<string, unknown> & { id: string }>> {
  const { rows } = await db.query<Record<string, unknown> & { id: string }>(
    sql`SELECT h.id::text AS id, h.case_id AS "caseId", h.from_status AS "fromStatus", h.to_status AS "toStatus",
               h.actor, h.note, h.at
          FROM case_status_history h JOIN cases c ON c.id = h.case_id
         WHERE c.workspace_id = ${workspaceId} AND h.id > ${after}::bigint
         ORDER BY h.id LIMIT ${PAGE}`,
  );
  return paged(rows);
}

export async function caseTriageHistoryPage(
  db: Db,
  workspaceId: string,
  after: string,
): Promise<HistoryPage<Record<string, unknown> & { id: string }>> {
  const { rows } = await db.query<Record<string, unknown> & { id: string }>(
    sql`SELECT id::text AS id, case_id AS "caseId", key_id AS "keyId", priority,
               recommended_action AS "recommendedAction", reasoning, confidence_score AS "confidenceScore",
               severity_override AS "severityOverride", model, triaged_at AS "triagedAt",
               policy_version AS "policyVersion", kev, epss, cvss::float8 AS cvss
          FROM case_triage_history
         WHERE workspace_id = ${workspaceId} AND id > ${after}::bigint
         ORDER BY id LIMIT ${PAGE}`,
  );
  return paged(rows);
}

export async function auditEventPage(
  db: Db,
  workspaceId: string,
  after: string,
): Promise<HistoryPage<Record<string, unknown> & { id: string }>> {
  const { rows } = await db.query<Record<string, unknown> & { id: string }>(
    sql`SELECT id::text AS id, at, action, actor, key_id AS "keyId", ip, user_agent AS "userAgent", details
          FROM key_audit_events
         WHERE workspace_id = ${workspaceId} AND id > ${after}::bigint
         ORDER BY id LIMIT ${PAGE}`,
  );
  return paged(rows);
}

/** The workspace's identity for the archive's manifest; null when it is gone. */
export async function archiveWorkspace(
  db: Db,
  workspaceId: string,
): Promise<{ id: string; name: string; plan: string; createdAt: Date } | null> {
  const { rows } = await db.query<{ id: string; name: string; plan: string; createdAt: Date }>(
    sql`SELECT id, name, plan, created_at AS "createdAt" FROM workspaces WHERE id = ${workspaceId}`,
  );
  return rows[0] ?? null;
}
