import type { Db } from '../../../db/pool.js';
import { sql } from '../../../db/sql.js';
import type { Role } from '../../../db/entities/index.js';

/**
 * The single sign-on tables of the workspaces area: `workspace_sso`, `workspace_sso_domains`
 * and `sso_sign_ins` (docs/console.md#single-sign-on). It also reads `console_users` and
 * `memberships` to match a person by email, `workspace_deletions` (a workspace being deleted
 * takes no sign-in), and writes a membership's role when the groups
 * claim maps to one. Every function takes the pool or a client of the caller's transaction.
 */

/** A workspace's provider settings as stored; the client secret stays sealed. */
export interface SsoRow {
  workspaceId: string;
  slug: string;
  issuer: string;
  clientId: string;
  clientSecretSealed: string | null;
  enabled: boolean;
  ssoRequired: boolean;
  autoJoin: boolean;
  defaultRole: string;
  groupsClaim: string;
  groupRoles: Record<string, string>;
  emailDomains: string[];
  updatedAt: Date;
  /** The workspace's deletion has been asked for: nobody signs in to it any more (read only). */
  deleting?: boolean;
}

const SELECT_SSO = sql`
  SELECT s.workspace_id AS "workspaceId", s.slug, s.issuer, s.client_id AS "clientId",
         s.client_secret_sealed AS "clientSecretSealed", s.enabled, s.sso_required AS "ssoRequired",
         s.auto_join AS "autoJoin", s.default_role AS "defaultRole", s.groups_claim AS "groupsClaim",
         s.group_roles AS "groupRoles", s.updated_at AS "updatedAt",
         COALESCE((SELECT array_agg(d.domain ORDER BY d.domain) FROM workspace_sso_domains d
                    WHERE d.workspace_id = s.workspace_id), '{}') AS "emailDomains",
         EXISTS (SELECT 1 FROM workspace_deletions x WHERE x.workspace_id = s.workspace_id) AS deleting
    FROM workspace_sso s`;

/** The workspace's settings, or null when it has none. */
export async function findSso(db: Db, workspaceId: string): Promise<SsoRow | null> {
  const { rows } = await db.query<SsoRow>(sql`${SELECT_SSO} WHERE s.workspace_id = ${workspaceId}`);
  return rows[0] ?? null;
}

/** The settings found by slug or by an email domain, or null. */
export async function findSsoBy(db: Db, by: { slug: string } | { domain: string }): Promise<SsoRow | null> {
  const where =
    'slug' in by
      ? sql`s.slug = ${by.slug}`
      : sql`s.workspace_id = (SELECT workspace_id FROM workspace_sso_domains WHERE domain = ${by.domain})`;
  const { rows } = await db.query<SsoRow>(sql`${SELECT_SSO} WHERE ${where}`);
  return rows[0] ?? null;
}

/** Writes the settings and replaces the domains (a unique violation when another workspace holds one). */
export async function upsertSso(db: Db, row: SsoRow): Promise<void> {
  await db.query(sql`
    INSERT INTO workspace_sso (workspace_id, slug, issuer, client_id, client_secret_sealed, enabled,
                               sso_required, auto_join, default_role, groups_claim, group_roles, updated_at)
    VALUES (${row.workspaceId}, ${row.slug}, ${row.issuer}, ${row.clientId}, ${row.clientSecretSealed},
            ${row.enabled}, ${row.ssoRequired}, ${row.autoJoin}, ${row.defaultRole}, ${row.groupsClaim},
            ${JSON.stringify(row.groupRoles)}, ${row.updatedAt})
    ON CONFLICT (workspace_id) DO UPDATE SET
      slug = EXCLUDED.slug, issuer = EXCLUDED.issuer, client_id = EXCLUDED.client_id,
      client_secret_sealed = EXCLUDED.client_secret_sealed, enabled = EXCLUDED.enabled,
      sso_required = EXCLUDED.sso_required, auto_join = EXCLUDED.auto_join,
      default_role = EXCLUDED.default_role, groups_claim = EXCLUDED.groups_claim,
      group_roles = EXCLUDED.group_roles, updated_at = EXCLUDED.updated_at`);
  await db.query(sql`DELETE FROM workspace_sso_domains WHERE workspace_id = ${row.workspaceId}`);
  if (row.emailDomains.length > 0) {
    await db.query(sql`
      INSERT INTO workspace_sso_domains (domain, workspace_id)
      SELECT unnest(${row.emailDomains}::text[]), ${row.workspaceId}`);
  }
}

/** A sign-in in flight (the state itself is only in the browser and at the provider). */
export interface SignInRow {
  stateHash: string;
  workspaceId: string;
  browserHash: string;
  nonce: string;
  codeVerifier: string;
  expiresAt: Date;
}

/**
 * How long a used or expired sign-in's row stays: a replayed or late callback still names its
 * workspace, where the refusal is audited (docs/console.md#failed-sign-ins).
 */
const KEEP_AFTER_EXPIRY = '1 day';

/** Stores a sign-in in flight, and drops the ones a day past their expiry on the way. */
export async function insertSignIn(db: Db, row: SignInRow, now: Date): Promise<void> {
  await db.query(
    sql`DELETE FROM sso_sign_ins WHERE expires_at <= ${now}::timestamptz - ${KEEP_AFTER_EXPIRY}::interval`,
  );
  await db.query(sql`
    INSERT INTO sso_sign_ins (state_hash, workspace_id, browser_hash, nonce, code_verifier, expires_at)
    VALUES (${row.stateHash}, ${row.workspaceId}, ${row.browserHash}, ${row.nonce}, ${row.codeVerifier},
            ${row.expiresAt})`);
}

/**
 * Takes the sign-in of a state hash: marked used as it is read (its nonce and verifier wiped),
 * so a second callback with the same state finds nothing to take. Null when there is none, it
 * was used, it has expired at `now`, or another browser started it (that browser's row stays,
 * for its own callback); {@link whyNotTaken} says which.
 */
export async function takeSignIn(
  db: Db,
  stateHash: string,
  browserHash: string,
  now: Date,
): Promise<SignInRow | null> {
  const { rows } = await db.query<SignInRow>(sql`
    UPDATE sso_sign_ins s SET used_at = ${now}, nonce = '', code_verifier = ''
      FROM (SELECT state_hash, nonce, code_verifier FROM sso_sign_ins
             WHERE state_hash = ${stateHash} AND browser_hash = ${browserHash} AND used_at IS NULL
               AND expires_at > ${now}
               FOR UPDATE) old
     WHERE s.state_hash = old.state_hash
    RETURNING s.state_hash AS "stateHash", s.workspace_id AS "workspaceId", s.browser_hash AS "browserHash",
              old.nonce, old.code_verifier AS "codeVerifier", s.expires_at AS "expiresAt"`);
  return rows[0] ?? null;
}

/** Why a state was not taken, and the workspace it belongs to; null when the state is unknown. */
export async function whyNotTaken(
  db: Db,
  stateHash: string,
  browserHash: string | null,
  now: Date,
): Promise<{ workspaceId: string; reason: 'other_browser' | 'state_used' | 'state_expired' } | null> {
  const { rows } = await db.query<{
    workspaceId: string;
    sameBrowser: boolean;
    used: boolean;
    expiresAt: Date;
  }>(
    sql`SELECT workspace_id AS "workspaceId", browser_hash = ${browserHash ?? ''} AS "sameBrowser",
               used_at IS NOT NULL AS used, expires_at AS "expiresAt"
          FROM sso_sign_ins WHERE state_hash = ${stateHash}`,
  );
  const row = rows[0];
  if (!row) return null;
  const reason = !row.sameBrowser
    ? 'other_browser'
    : row.used
      ? 'state_used'
      : row.expiresAt.getTime() <= now.getTime()
        ? 'state_expired'
        : 'state_used';
  return { workspaceId: row.workspaceId, reason };
}

/** A console user by email (case-insensitive) and their role in `workspaceId` (null: not a member). */
export async function findPerson(
  db: Db,
  email: string,
  workspaceId: string,
): Promise<{ userId: string; role: string | null } | null> {
  const { rows } = await db.query<{ userId: string; role: string | null }>(sql`
    SELECT u.id AS "userId", m.role
      FROM console_users u
      LEFT JOIN memberships m ON m.user_id = u.id AND m.workspace_id = ${workspaceId}
     WHERE lower(u.email) = lower(${email})`);
  return rows[0] ?? null;
}

/** Sets a member's role (never an owner's: the caller leaves owners alone). */
export async function updateMemberRole(
  db: Db,
  userId: string,
  workspaceId: string,
  role: string,
): Promise<void> {
  await db.query(sql`
    UPDATE memberships SET role = ${role}
     WHERE user_id = ${userId} AND workspace_id = ${workspaceId} AND role <> 'owner'`);
}

/**
 * The workspace a password sign-in may open for this user, and their role there: the first of
 * theirs that does not require single sign-on, or where they are an owner (the owners' way back
 * in when the provider fails, docs/console.md#sso-required). Null when every one requires it.
 */
export async function passwordWorkspace(
  db: Db,
  userId: string,
): Promise<{ workspaceId: string; role: Role } | null> {
  const { rows } = await db.query<{ workspaceId: string; role: Role }>(sql`
    SELECT m.workspace_id AS "workspaceId", m.role
      FROM memberships m
      LEFT JOIN workspace_sso s ON s.workspace_id = m.workspace_id AND s.enabled AND s.sso_required
     WHERE m.user_id = ${userId} AND (s.workspace_id IS NULL OR m.role = 'owner')
     ORDER BY m.created_at LIMIT 1`);
  return rows[0] ?? null;
}
