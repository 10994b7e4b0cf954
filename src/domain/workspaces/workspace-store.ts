import type { Em } from '../../db/orm.js';
import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import {
  ConsoleUserSchema,
  MembershipSchema,
  PlanChangeSchema,
  WorkspaceSchema,
  type ConsoleUser,
  type Membership,
  type PlanChange,
  type Workspace,
} from '../../db/entities/index.js';

/**
 * The workspaces area's tables: `workspaces`, `plan_changes`, `console_users` and
 * `memberships` and `console_sessions` (sessions.ts makes and hashes the tokens). MikroORM maps the
 * first four;
 * `(em, …)` functions work in the caller's unit of work, `(db, …)` ones are set-based
 * statements on the pool or a transaction client.
 */

/** A workspace by id, or null. */
export async function findWorkspace(em: Em, id: string): Promise<Workspace | null> {
  return em.findOne(WorkspaceSchema, { id });
}

/** Adds a workspace to the unit of work. */
export function addWorkspace(em: Em, workspace: Workspace): Workspace {
  return em.create(WorkspaceSchema, workspace);
}

/** Records a plan change in the unit of work (the plan history, DECISIONS §5). */
export function addPlanChange(em: Em, change: PlanChange): void {
  em.create(PlanChangeSchema, change);
}

/** Adds a console user to the unit of work. */
export function addUser(em: Em, user: ConsoleUser): void {
  em.create(ConsoleUserSchema, user);
}

/** Adds a membership to the unit of work. */
export function addMembership(em: Em, membership: Membership): void {
  em.create(MembershipSchema, membership);
}

/** True when a console user has this email, compared case-insensitively, in `em`'s transaction. */
export async function emailTaken(em: Em, email: string): Promise<boolean> {
  const rows = await em
    .getConnection()
    .execute(
      'SELECT 1 FROM console_users WHERE lower(email) = lower(?)',
      [email],
      'all',
      em.getTransactionContext(),
    );
  return rows.length > 0;
}

/** The user with this email (case-insensitive) and their first workspace, or null. */
export async function findLogin(
  em: Em,
  email: string,
): Promise<{ userId: string; passwordHash: string; workspaceId: string } | null> {
  const rows = await em
    .getConnection()
    .execute<{ id: string; password_hash: string; workspace_id: string }[]>(
      `SELECT u.id, u.password_hash, m.workspace_id FROM console_users u
       JOIN memberships m ON m.user_id = u.id
      WHERE lower(u.email) = lower(?) ORDER BY m.created_at LIMIT 1`,
      [email],
    );
  const r = rows[0];
  return r ? { userId: r.id, passwordHash: r.password_hash, workspaceId: r.workspace_id } : null;
}

/**
 * Replaces a console user's password hash, only if it is still the one just verified: two
 * logins rehashing at once both write a valid hash, and neither undoes a password change.
 */
export async function updatePasswordHash(
  em: Em,
  userId: string,
  previousHash: string,
  newHash: string,
): Promise<void> {
  await em
    .getConnection()
    .execute('UPDATE console_users SET password_hash = ? WHERE id = ? AND password_hash = ?', [
      newHash,
      userId,
      previousHash,
    ]);
}

/**
 * Moves every trial ended at `now` to `free` and records each change, in one statement;
 * returns the workspaces' ids (for the invalidation bus).
 */
export async function endDueTrials(db: Db, now: Date): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    sql`WITH ended AS (
          UPDATE workspaces SET plan = 'free' WHERE plan = 'trial' AND trial_ends_at <= ${now} RETURNING id
        ), changes AS (
          INSERT INTO plan_changes (workspace_id, from_plan, to_plan, reason, actor, at)
          SELECT id, 'trial', 'free', 'trial_ended', 'system', ${now} FROM ended
        )
        SELECT id FROM ended`,
  );
  return rows.map((r) => r.id);
}

/** A console session as stored: only the HMAC of its token (sessions.ts). */
export interface SessionRow {
  id: string;
  tokenHash: string;
  userId: string;
  workspaceId: string;
  csrfToken: string;
  expiresAt: Date;
}

/** Stores a new console session. */
export async function insertSession(db: Db, s: SessionRow): Promise<void> {
  await db.query(sql`
    INSERT INTO console_sessions (id, token_hash, csrf_token, user_id, workspace_id, expires_at)
    VALUES (${s.id}, ${s.tokenHash}, ${s.csrfToken}, ${s.userId}, ${s.workspaceId}, ${s.expiresAt})`);
}

/** The session of a token hash, unless it has expired at `now`. */
export async function findLiveSession(
  db: Db,
  tokenHash: string,
  now: Date,
): Promise<Omit<SessionRow, 'tokenHash'> | null> {
  const res = await db.query<Omit<SessionRow, 'tokenHash'>>(sql`
    SELECT id, user_id AS "userId", workspace_id AS "workspaceId", csrf_token AS "csrfToken", expires_at AS "expiresAt"
      FROM console_sessions WHERE token_hash = ${tokenHash} AND expires_at > ${now}`);
  return res.rows[0] ?? null;
}

/** Ends the session of a token hash (nothing when there is none). */
export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  await db.query(sql`DELETE FROM console_sessions WHERE token_hash = ${tokenHash}`);
}
