import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import type { Invitation } from '../../db/entities/index.js';

/**
 * Table `invitations` (docs/console.md#invitations): only the HMAC of a token is stored, and
 * every read by id names the workspace.
 */

const COLUMNS = sql`id, workspace_id AS "workspaceId", email, role, token_hash AS "tokenHash",
  invited_by AS "invitedBy", created_at AS "createdAt", expires_at AS "expiresAt",
  accepted_at AS "acceptedAt", revoked_at AS "revokedAt"`;

export async function insertInvitation(db: Db, i: Invitation): Promise<void> {
  await db.query(
    sql`INSERT INTO invitations (id, workspace_id, email, role, token_hash, invited_by, created_at, expires_at)
        VALUES (${i.id}, ${i.workspaceId}, ${i.email}, ${i.role}, ${i.tokenHash}, ${i.invitedBy},
          ${i.createdAt}, ${i.expiresAt})`,
  );
}

/** The workspace's invitations still open at `now` (not accepted, revoked or expired), newest first. */
export async function listOpenInvitations(db: Db, workspaceId: string, now: Date): Promise<Invitation[]> {
  const { rows } = await db.query<Invitation>(
    sql`SELECT ${COLUMNS} FROM invitations
         WHERE workspace_id = ${workspaceId} AND accepted_at IS NULL AND revoked_at IS NULL
           AND expires_at > ${now}
         ORDER BY created_at DESC, id`,
  );
  return rows;
}

/** The invitation of a token hash, locked for the caller's transaction (acceptance is once). */
export async function findInvitationByTokenHash(
  db: Db,
  tokenHash: string,
  forUpdate = false,
): Promise<Invitation | null> {
  const lock = forUpdate ? sql`FOR UPDATE` : sql``;
  const { rows } = await db.query<Invitation>(
    sql`SELECT ${COLUMNS} FROM invitations WHERE token_hash = ${tokenHash} ${lock}`,
  );
  return rows[0] ?? null;
}

export async function markInvitationAccepted(db: Db, id: string, at: Date): Promise<void> {
  await db.query(sql`UPDATE invitations SET accepted_at = ${at} WHERE id = ${id}`);
}

/** Revokes an open invitation of the workspace; returns it, or null (unknown, or no longer open). */
export async function revokeInvitation(
  db: Db,
  workspaceId: string,
  id: string,
  at: Date,
): Promise<Invitation | null> {
  const { rows } = await db.query<Invitation>(
    sql`UPDATE invitations SET revoked_at = ${at}
         WHERE workspace_id = ${workspaceId} AND id = ${id} AND accepted_at IS NULL AND revoked_at IS NULL
        RETURNING ${COLUMNS}`,
  );
  return rows[0] ?? null;
}

/** Revokes the open invitations of one address to the workspace (a new one replaces them). */
export async function revokeOpenInvitationsFor(
  db: Db,
  workspaceId: string,
  email: string,
  at: Date,
): Promise<void> {
  await db.query(
    sql`UPDATE invitations SET revoked_at = ${at}
         WHERE workspace_id = ${workspaceId} AND lower(email) = lower(${email})
           AND accepted_at IS NULL AND revoked_at IS NULL`,
  );
}
