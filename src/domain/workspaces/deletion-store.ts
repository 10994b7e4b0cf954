import type { Db, Queryable } from '../../db/pool.js';
import { sql } from '../../db/sql.js';

/**
 * The statements of a workspace's end of life (docs/operations.md#end-of-life): the record that
 * outlives it (`workspace_deletions`), the request's revocations, and the removal the job does in
 * steps. Removing the `workspaces` row removes every table that names it (foreign keys with
 * ON DELETE CASCADE, and m017's statement triggers for cases, findings and evidence); scans go
 * first in slices, so no single statement holds millions of findings' locks.
 */

/** A deletion as its status resource shows it. */
export interface DeletionRecord {
  id: string;
  workspaceId: string;
  workspaceName: string;
  requestedAt: Date;
  finishedAt: Date | null;
  scansRemoved: number;
  filesRemoved: number;
}

const COLUMNS = sql`id, workspace_id AS "workspaceId", workspace_name AS "workspaceName",
  requested_at AS "requestedAt", finished_at AS "finishedAt", scans_removed AS "scansRemoved",
  files_removed AS "filesRemoved"`;

/** The workspace's name, its row locked for the caller's transaction; null when it is gone. */
export async function lockWorkspaceName(db: Db, workspaceId: string): Promise<string | null> {
  const { rows } = await db.query<{ name: string }>(
    sql`SELECT name FROM workspaces WHERE id = ${workspaceId} FOR UPDATE`,
  );
  return rows[0]?.name ?? null;
}

/** The role of a user in a workspace, or null when they are not a member. */
export async function memberRole(db: Db, workspaceId: string, userId: string): Promise<string | null> {
  const { rows } = await db.query<{ role: string }>(
    sql`SELECT role FROM memberships WHERE workspace_id = ${workspaceId} AND user_id = ${userId}`,
  );
  return rows[0]?.role ?? null;
}

/** Stores the record; an existing one for the workspace is kept and returned instead. */
export async function insertDeletion(
  db: Db,
  d: {
    id: string;
    workspaceId: string;
    workspaceName: string;
    actor: string;
    ip: string | null;
    userAgent: string | null;
    requestedAt: Date;
  },
): Promise<DeletionRecord> {
  await db.query(
    sql`INSERT INTO workspace_deletions (id, workspace_id, workspace_name, actor, ip, user_agent, requested_at)
        VALUES (${d.id}, ${d.workspaceId}, ${d.workspaceName}, ${d.actor}, ${d.ip}, ${d.userAgent}, ${d.requestedAt})
        ON CONFLICT (workspace_id) DO NOTHING`,
  );
  const { rows } = await db.query<DeletionRecord>(
    sql`SELECT ${COLUMNS} FROM workspace_deletions WHERE workspace_id = ${d.workspaceId}`,
  );
  return rows[0]!;
}

export async function findDeletion(db: Queryable, id: string): Promise<DeletionRecord | null> {
  const { rows } = await db.query<DeletionRecord>(
    sql`SELECT ${COLUMNS} FROM workspace_deletions WHERE id = ${id}`,
  );
  return rows[0] ?? null;
}

/** Deletions not finished, oldest first: the maintenance run queues their jobs again. */
export async function unfinishedDeletionIds(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    sql`SELECT id FROM workspace_deletions WHERE finished_at IS NULL ORDER BY requested_at LIMIT 100`,
  );
  return rows.map((r) => r.id);
}

/**
 * Shuts the workspace at once, in the request's transaction: every key revoked (the key-version
 * trigger of m008 tells every process's cache), every session ended, every membership removed
 * (nobody can sign in to it again), and the accounts that belonged to no other workspace removed.
 * Returns the ids of the keys it revoked.
 */
export async function shutWorkspace(db: Db, workspaceId: string, now: Date): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    sql`UPDATE api_keys SET state = 'revoked', revoked_at = ${now}, grace_ends_at = NULL
         WHERE workspace_id = ${workspaceId} AND state <> 'revoked' RETURNING id`,
  );
  await db.query(sql`DELETE FROM key_reveals WHERE workspace_id = ${workspaceId}`);
  await db.query(sql`DELETE FROM console_sessions WHERE workspace_id = ${workspaceId}`);
  await db.query(
    sql`WITH gone AS (DELETE FROM memberships WHERE workspace_id = ${workspaceId} RETURNING user_id)
        DELETE FROM console_users u USING gone
         WHERE u.id = gone.user_id
           AND NOT EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = u.id AND m.workspace_id <> ${workspaceId})`,
  );
  return rows.map((r) => r.id);
}

/** Removes up to `limit` of the workspace's scans (their findings and evidence follow); returns how many. */
export async function deleteScanSlice(db: Queryable, workspaceId: string, limit: number): Promise<number> {
  const res = await db.query(
    sql`DELETE FROM scans WHERE id IN (SELECT id FROM scans WHERE workspace_id = ${workspaceId} LIMIT ${limit})`,
  );
  return res.rowCount ?? 0;
}

/**
 * Removes the workspace row and, with it, every row that names it. The tables that carry a
 * `workspace_id` without a foreign key to it (the workflow tables' copies) go with their
 * workflows or cases, which do.
 */
export async function deleteWorkspaceRow(db: Queryable, workspaceId: string): Promise<void> {
  await db.query(sql`DELETE FROM workspaces WHERE id = ${workspaceId}`);
}

/** Marks the deletion finished (once: a second call leaves the first time). */
export async function finishDeletion(db: Queryable, id: string, finishedAt: Date): Promise<void> {
  await db.query(
    sql`UPDATE workspace_deletions SET finished_at = ${finishedAt} WHERE id = ${id} AND finished_at IS NULL`,
  );
}

/** Counts what an unfinished attempt removed, so a retried job's figures add up. */
export async function addDeletionProgress(
  db: Queryable,
  id: string,
  step: { scansRemoved: number; filesRemoved: number },
): Promise<void> {
  await db.query(
    sql`UPDATE workspace_deletions
           SET scans_removed = scans_removed + ${step.scansRemoved}, files_removed = files_removed + ${step.filesRemoved}
         WHERE id = ${id} AND finished_at IS NULL`,
  );
}
