import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import type { ConsoleUser, Membership, PlanChange, Role, Workspace } from '../../db/entities/index.js';

/**
 * The workspaces area's tables: `workspaces`, `plan_changes`, `console_users`, `memberships`
 * and `console_sessions` (sessions.ts makes and hashes the tokens). Every function takes the
 * pool or a client of the caller's transaction (`withTransaction`).
 */

/** A workspace by id, or null. */
export async function findWorkspace(db: Db, id: string): Promise<Workspace | null> {
  const { rows } = await db.query<Workspace>(
    sql`SELECT id, name, plan, trial_ends_at AS "trialEndsAt", status,
               rotation_policy_days AS "rotationPolicyDays", created_at AS "createdAt"
          FROM workspaces WHERE id = ${id}`,
  );
  return rows[0] ?? null;
}

/** Stores a new workspace. */
export async function insertWorkspace(db: Db, w: Workspace): Promise<void> {
  await db.query(
    sql`INSERT INTO workspaces (id, name, plan, trial_ends_at, status, rotation_policy_days, created_at)
        VALUES (${w.id}, ${w.name}, ${w.plan}, ${w.trialEndsAt}, ${w.status}, ${w.rotationPolicyDays},
          ${w.createdAt})`,
  );
}

/** Writes a workspace's plan and trial end as they are in `w`. */
export async function updatePlan(db: Db, w: Pick<Workspace, 'id' | 'plan' | 'trialEndsAt'>): Promise<void> {
  await db.query(
    sql`UPDATE workspaces SET plan = ${w.plan}, trial_ends_at = ${w.trialEndsAt} WHERE id = ${w.id}`,
  );
}

/** Records a plan change (the plan history). */
export async function insertPlanChange(db: Db, c: PlanChange): Promise<void> {
  await db.query(
    sql`INSERT INTO plan_changes (workspace_id, from_plan, to_plan, reason, actor, at)
        VALUES (${c.workspaceId}, ${c.fromPlan}, ${c.toPlan}, ${c.reason}, ${c.actor}, ${c.at})`,
  );
}

/** Stores a console user. */
export async function insertUser(db: Db, u: ConsoleUser): Promise<void> {
  await db.query(
    sql`INSERT INTO console_users (id, email, password_hash, created_at)
        VALUES (${u.id}, ${u.email}, ${u.passwordHash}, ${u.createdAt})`,
  );
}

/** Stores a membership. */
export async function insertMembership(db: Db, m: Membership): Promise<void> {
  await db.query(
    sql`INSERT INTO memberships (user_id, workspace_id, role, created_at)
        VALUES (${m.userId}, ${m.workspaceId}, ${m.role}, ${m.createdAt})`,
  );
}

/** True when a console user has this email, compared case-insensitively. */
export async function emailTaken(db: Db, email: string): Promise<boolean> {
  const { rows } = await db.query(sql`SELECT 1 FROM console_users WHERE lower(email) = lower(${email})`);
  return rows.length > 0;
}

/** The user with this email (case-insensitive), their first workspace and role there, or null. */
export async function findLogin(
  db: Db,
  email: string,
): Promise<{ userId: string; passwordHash: string; workspaceId: string; role: Role } | null> {
  const { rows } = await db.query<{ userId: string; passwordHash: string; workspaceId: string; role: Role }>(
    sql`SELECT u.id AS "userId", u.password_hash AS "passwordHash", m.workspace_id AS "workspaceId", m.role
          FROM console_users u JOIN memberships m ON m.user_id = u.id
         WHERE lower(u.email) = lower(${email}) ORDER BY m.created_at LIMIT 1`,
  );
  return rows[0] ?? null;
}

/**
 * Replaces a console user's password hash, only if it is still the one just verified: two
 * logins rehashing at once both write a valid hash, and neither undoes a password change.
 */
export async function updatePasswordHash(
  db: Db,
  userId: string,
  previousHash: string,
  newHash: string,
): Promise<void> {
  await db.query(
    sql`UPDATE console_users SET password_hash = ${newHash} WHERE id = ${userId} AND password_hash = ${previousHash}`,
  );
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
  /** What made it: a password (or sign-up, an invitation) or its own workspace's single sign-on. */
  signIn: SignInMethod;
}

/** How a console session was made (docs/console.md#sso-and-sessions). */
export type SignInMethod = 'password' | 'sso';

/** Stores a new console session. */
export async function insertSession(db: Db, s: SessionRow): Promise<void> {
  await db.query(sql`
    INSERT INTO console_sessions (id, token_hash, csrf_token, user_id, workspace_id, expires_at, sign_in)
    VALUES (${s.id}, ${s.tokenHash}, ${s.csrfToken}, ${s.userId}, ${s.workspaceId}, ${s.expiresAt},
            ${s.signIn})`);
}

/**
 * The session of a token hash with the member's role now, unless it has expired at `now`, its
 * user is no longer a member of its workspace (removed members are signed out at once:
 * docs/console.md#members-and-roles), or its workspace requires single sign-on and the session
 * is a non-owner's that its SSO did not make (docs/console.md#sso-and-sessions): the rule is read
 * on every request, so it holds whichever way the session got there and whenever SSO became
 * required or the owner became an admin.
 */
export async function findLiveSession(
  db: Db,
  tokenHash: string,
  now: Date,
): Promise<(Omit<SessionRow, 'tokenHash'> & { role: Role }) | null> {
  const res = await db.query<Omit<SessionRow, 'tokenHash'> & { role: Role }>(sql`
    SELECT s.id, s.user_id AS "userId", s.workspace_id AS "workspaceId", s.csrf_token AS "csrfToken",
           s.expires_at AS "expiresAt", s.sign_in AS "signIn", m.role
      FROM console_sessions s
      JOIN memberships m ON m.user_id = s.user_id AND m.workspace_id = s.workspace_id
      LEFT JOIN workspace_sso w ON w.workspace_id = s.workspace_id AND w.enabled AND w.sso_required
     WHERE s.token_hash = ${tokenHash} AND s.expires_at > ${now}
       AND (w.workspace_id IS NULL OR m.role = 'owner' OR s.sign_in = 'sso')`);
  return res.rows[0] ?? null;
}

/**
 * Ends the sessions of a workspace that requires single sign-on and no longer admits: the
 * non-owners' that its SSO did not make. Returns how many ended.
 */
export async function deleteSessionsWithoutSso(db: Db, workspaceId: string): Promise<number> {
  const res = await db.query(sql`
    DELETE FROM console_sessions s
     USING memberships m
     WHERE s.workspace_id = ${workspaceId} AND s.sign_in <> 'sso'
       AND m.user_id = s.user_id AND m.workspace_id = s.workspace_id AND m.role <> 'owner'`);
  return res.rowCount ?? 0;
}

/** Ends the session of a token hash (nothing when there is none). */
export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  await db.query(sql`DELETE FROM console_sessions WHERE token_hash = ${tokenHash}`);
}

/** Ends every session of a user, or only those in one workspace. Returns how many ended. */
export async function deleteUserSessions(db: Db, userId: string, workspaceId?: string): Promise<number> {
  const res =
    workspaceId === undefined
      ? await db.query(sql`DELETE FROM console_sessions WHERE user_id = ${userId}`)
      : await db.query(
          sql`DELETE FROM console_sessions WHERE user_id = ${userId} AND workspace_id = ${workspaceId}`,
        );
  return res.rowCount ?? 0;
}
