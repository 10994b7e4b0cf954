import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import type { Role } from '../../db/entities/index.js';

/**
 * A workspace's members as the members area reads and changes them: `memberships` joined to
 * `console_users` (docs/console.md#members-and-roles). Every read and write names the
 * workspace, so another workspace's member ids are as unknown as made-up ones.
 */

export interface MemberRow {
  userId: string;
  email: string;
  role: Role;
  joinedAt: Date;
}

/** The workspace's members, owners first, then by when they joined. */
export async function listMembers(db: Db, workspaceId: string): Promise<MemberRow[]> {
  const { rows } = await db.query<MemberRow>(
    sql`SELECT m.user_id AS "userId", u.email, m.role, m.created_at AS "joinedAt"
          FROM memberships m JOIN console_users u ON u.id = m.user_id
         WHERE m.workspace_id = ${workspaceId}
         ORDER BY array_position(ARRAY['owner', 'admin', 'member', 'viewer'], m.role), m.created_at, u.email`,
  );
  return rows;
}

/**
 * One member, or null; with `forUpdate` the row stays locked until the caller's transaction
 * ends, so two changes to one member take turns.
 */
export async function findMember(
  db: Db,
  workspaceId: string,
  userId: string,
  forUpdate = false,
): Promise<MemberRow | null> {
  const lock = forUpdate ? sql`FOR UPDATE OF m` : sql``;
  const { rows } = await db.query<MemberRow>(
    sql`SELECT m.user_id AS "userId", u.email, m.role, m.created_at AS "joinedAt"
          FROM memberships m JOIN console_users u ON u.id = m.user_id
         WHERE m.workspace_id = ${workspaceId} AND m.user_id = ${userId} ${lock}`,
  );
  return rows[0] ?? null;
}

/**
 * The ids of the workspace's owners, their rows locked for the caller's transaction: a change
 * that could leave no owner counts them under this lock, so two at once cannot both pass.
 */
export async function lockOwners(db: Db, workspaceId: string): Promise<string[]> {
  const { rows } = await db.query<{ userId: string }>(
    sql`SELECT user_id AS "userId" FROM memberships
         WHERE workspace_id = ${workspaceId} AND role = 'owner' ORDER BY user_id FOR UPDATE`,
  );
  return rows.map((r) => r.userId);
}

export async function updateRole(db: Db, workspaceId: string, userId: string, role: Role): Promise<void> {
  await db.query(
    sql`UPDATE memberships SET role = ${role} WHERE workspace_id = ${workspaceId} AND user_id = ${userId}`,
  );
}

export async function deleteMembership(db: Db, workspaceId: string, userId: string): Promise<void> {
  await db.query(sql`DELETE FROM memberships WHERE workspace_id = ${workspaceId} AND user_id = ${userId}`);
}

/** The workspaces a user belongs to, with their role in each, oldest membership first. */
export async function workspacesOf(
  db: Db,
  userId: string,
): Promise<{ id: string; name: string; role: Role }[]> {
  const { rows } = await db.query<{ id: string; name: string; role: Role }>(
    sql`SELECT w.id, w.name, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
         WHERE m.user_id = ${userId} ORDER BY m.created_at, w.name`,
  );
  return rows;
}

/** A workspace of the person as a switch needs it: their role, its name, its single sign-on. */
export interface SwitchTargetRow {
  role: Role;
  name: string;
  /** The slug of its SSO when enabled, else null. */
  ssoSlug: string | null;
  ssoRequired: boolean;
}

/** The person's membership of `workspaceId` with what a switch into it asks, or null. */
export async function findSwitchTarget(
  db: Db,
  userId: string,
  workspaceId: string,
): Promise<SwitchTargetRow | null> {
  const { rows } = await db.query<SwitchTargetRow>(
    sql`SELECT m.role, w.name, s.slug AS "ssoSlug", COALESCE(s.sso_required, false) AS "ssoRequired"
          FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
          LEFT JOIN workspace_sso s ON s.workspace_id = m.workspace_id AND s.enabled
         WHERE m.user_id = ${userId} AND m.workspace_id = ${workspaceId}`,
  );
  return rows[0] ?? null;
}

/** A console user by email (case-insensitive), or null. */
export async function findUserByEmail(
  db: Db,
  email: string,
): Promise<{ id: string; email: string; passwordHash: string } | null> {
  const { rows } = await db.query<{ id: string; email: string; passwordHash: string }>(
    sql`SELECT id, email, password_hash AS "passwordHash" FROM console_users WHERE lower(email) = lower(${email})`,
  );
  return rows[0] ?? null;
}

/** A console user's email, or null. */
export async function emailOf(db: Db, userId: string): Promise<string | null> {
  const { rows } = await db.query<{ email: string }>(
    sql`SELECT email FROM console_users WHERE id = ${userId}`,
  );
  return rows[0]?.email ?? null;
}

/** Sets a user's password hash, whatever it was (a reset, or an accepted invitation). */
export async function setPasswordHash(db: Db, userId: string, hash: string): Promise<void> {
  await db.query(sql`UPDATE console_users SET password_hash = ${hash} WHERE id = ${userId}`);
}
