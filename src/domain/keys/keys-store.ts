import type { Db, Queryable } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import type { ApiKey, AuditAction, KeyState, PlanName, KeyAuditEvent } from '../../db/entities/index.js';

/**
 * The keys area's tables: `api_keys`, `key_audit_events` and `key_reveals` (and the `key_version`
 * counter); nothing else names them. The verifier's hot lookup (`findKeyByHash`) reads the key's workspace
 * row with it, in the same indexed query.
 *
 * Every function takes the pool or a client of the caller's transaction (`withTransaction`): the
 * key use cases run several of them as one transaction.
 */

/** The columns of `api_keys` as an {@link ApiKey}. */
const KEY_COLUMNS = sql`id, workspace_id AS "workspaceId", label, key_hash AS "keyHash", prefix,
  last_four AS "lastFour", scopes, state, expires_at AS "expiresAt", grace_ends_at AS "graceEndsAt",
  successor_id AS "successorId", created_at AS "createdAt", last_used_at AS "lastUsedAt",
  revoked_at AS "revokedAt"`;

/** A key of `workspaceId`, or null; `lock` takes its row lock for the caller's transaction. */
export async function findKey(
  db: Db,
  workspaceId: string,
  keyId: string,
  lock = false,
): Promise<ApiKey | null> {
  const { rows } = await db.query<ApiKey>(
    sql`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ${keyId} AND workspace_id = ${workspaceId}
        ${lock ? sql`FOR UPDATE` : sql.empty}`,
  );
  return rows[0] ?? null;
}

/** A workspace's keys, newest first. */
export async function listKeys(db: Db, workspaceId: string): Promise<ApiKey[]> {
  const { rows } = await db.query<ApiKey>(
    sql`SELECT ${KEY_COLUMNS} FROM api_keys WHERE workspace_id = ${workspaceId}
         ORDER BY created_at DESC, id ASC`,
  );
  return rows;
}

/** Stores a new key. */
export async function insertKeyRow(db: Db, key: ApiKey): Promise<void> {
  await db.query(
    sql`INSERT INTO api_keys (id, workspace_id, label, key_hash, prefix, last_four, scopes, state, expires_at,
          grace_ends_at, successor_id, created_at, last_used_at, revoked_at)
        VALUES (${key.id}, ${key.workspaceId}, ${key.label}, ${key.keyHash}, ${key.prefix}, ${key.lastFour},
          ${key.scopes}, ${key.state}, ${key.expiresAt}, ${key.graceEndsAt}, ${key.successorId},
          ${key.createdAt}, ${key.lastUsedAt}, ${key.revokedAt})`,
  );
}

/** Writes a key's lifecycle fields (state, grace end, successor, revocation) as they are in `key`. */
export async function updateKeyLifecycle(
  db: Db,
  key: Pick<ApiKey, 'id' | 'state' | 'graceEndsAt' | 'successorId' | 'revokedAt'>,
): Promise<void> {
  await db.query(
    sql`UPDATE api_keys SET state = ${key.state}, grace_ends_at = ${key.graceEndsAt},
          successor_id = ${key.successorId}, revoked_at = ${key.revokedAt}
        WHERE id = ${key.id}`,
  );
}

/** A one-time reveal row: the sealed secret of a new key and when its link expires. */
export interface RevealRow {
  tokenHash: string;
  keyId: string;
  workspaceId: string;
  sealedSecret: string;
  createdAt: Date;
  expiresAt: Date;
}

/** Stores a reveal row (in the transaction that stores the key it names). */
export async function insertReveal(db: Db, row: RevealRow): Promise<void> {
  await db.query(
    sql`INSERT INTO key_reveals (token_hash, key_id, workspace_id, sealed_secret, created_at, expires_at)
        VALUES (${row.tokenHash}, ${row.keyId}, ${row.workspaceId}, ${row.sealedSecret}, ${row.createdAt},
          ${row.expiresAt})`,
  );
}

/** A reveal row as read under its row lock by {@link takeReveal}. */
export interface HeldReveal {
  keyId: string;
  sealedSecret: string | null;
  expiresAt: Date;
  revealedAt: Date | null;
}

/**
 * Reads a workspace's reveal row under its row lock and wipes its sealed secret in the same
 * transaction, whatever the caller decides: two concurrent views cannot both see it.
 * `revealedAt` is recorded only when the caller says the reveal is usable. `db` must be a
 * client inside the caller's transaction, or the lock is released before the wipe.
 */
export async function takeReveal(
  db: Db,
  tokenHash: string,
  workspaceId: string,
  usable: (row: HeldReveal) => Date | null,
): Promise<HeldReveal | null> {
  const { rows } = await db.query<HeldReveal>(
    sql`SELECT key_id AS "keyId", sealed_secret AS "sealedSecret", expires_at AS "expiresAt",
               revealed_at AS "revealedAt"
          FROM key_reveals WHERE token_hash = ${tokenHash} AND workspace_id = ${workspaceId} FOR UPDATE`,
  );
  const row = rows[0];
  if (!row) return null;
  await db.query(
    sql`UPDATE key_reveals SET sealed_secret = NULL, revealed_at = COALESCE(revealed_at, ${usable(row)})
         WHERE token_hash = ${tokenHash}`,
  );
  return row;
}

/**
 * Keys of a workspace that authenticate at `now` (within expiry and grace), counted apart:
 * `active` ones and `rotating` ones (a rotated key in its grace period), so the console's
 * "Active keys" does not count a key that is on its way out.
 */
export async function countLiveKeys(
  db: Db,
  workspaceId: string,
  now: Date,
): Promise<{ active: number; rotating: number }> {
  const { rows } = await db.query<{ active: number; rotating: number }>(
    sql`SELECT count(*) FILTER (WHERE state = 'active')::int AS active,
               count(*) FILTER (WHERE state = 'rotating')::int AS rotating
          FROM api_keys WHERE workspace_id = ${workspaceId} AND state IN ('active', 'rotating')
           AND (expires_at IS NULL OR expires_at > ${now}) AND (grace_ends_at IS NULL OR grace_ends_at > ${now})`,
  );
  return { active: rows[0]?.active ?? 0, rotating: rows[0]?.rotating ?? 0 };
}

/**
 * Marks every key past its expiry or grace end at `now` as `expired`, with an audit event
 * each, in one statement; returns their ids (for the invalidation bus).
 */
export async function expireDueKeys(db: Db, now: Date): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    sql`WITH gone AS (
          UPDATE api_keys SET state = 'expired'
           WHERE state IN ('active', 'rotating')
             AND ((expires_at IS NOT NULL AND expires_at <= ${now}) OR (state = 'rotating' AND grace_ends_at <= ${now}))
           RETURNING id, workspace_id
        ), audit AS (
          INSERT INTO key_audit_events (workspace_id, key_id, action, actor, at)
          SELECT workspace_id, id, 'expire', 'system', ${now} FROM gone
        )
        SELECT id FROM gone`,
  );
  return rows.map((r) => r.id);
}

/** Wipes the sealed secrets of reveal links expired at `now`; returns how many. */
export async function wipeExpiredReveals(db: Db, now: Date): Promise<number> {
  const res = await db.query(
    sql`UPDATE key_reveals SET sealed_secret = NULL WHERE sealed_secret IS NOT NULL AND expires_at <= ${now}`,
  );
  return res.rowCount ?? 0;
}

/**
 * The key-version counter (migration m008): moved by triggers on every change to what a
 * process caches about a key or workspace. Returned as text: a bigint compared for equality.
 */
export async function readKeyVersion(db: Db): Promise<string> {
  const res = await db.query<{ version: string }>(
    sql`SELECT version::text AS version FROM key_version WHERE id = 1`,
  );
  return res.rows[0]?.version ?? '0';
}

/**
 * Appends one audit event (who, when, from where): on a transaction client it
 * commits with the change it records. `at` defaults to the database's transaction time.
 */
export async function insertAuditEvent(
  db: Queryable,
  e: Omit<KeyAuditEvent, 'id' | 'at' | 'details'> & { details?: Record<string, unknown>; at?: Date },
): Promise<void> {
  await db.query(
    sql`INSERT INTO key_audit_events (workspace_id, key_id, action, actor, ip, user_agent, details, at)
        VALUES (${e.workspaceId}, ${e.keyId}, ${e.action}, ${e.actor}, ${e.ip}, ${e.userAgent},
          ${JSON.stringify(e.details ?? {})}, ${e.at ?? sql`now()`})`,
  );
}

// The audit log read back: the only query that reads `key_audit_events`.

export interface AuditEventRow {
  id: string;
  at: Date;
  action: AuditAction;
  actor: string;
  ip: string | null;
  user_agent: string | null;
  key_id: string | null;
  details: Record<string, unknown>;
}

export interface AuditEventFilter {
  workspaceId: string;
  keyId?: string;
  action?: AuditAction;
  /** Inclusive lower bound of `at`. */
  from?: Date;
  /** Exclusive upper bound of `at`. */
  to?: Date;
  /** Only events older than this id (the keyset cursor). */
  beforeId?: string;
  limit: number;
}

/**
 * A workspace's audit events, newest first by id (ids only grow, so they never tie and a page
 * boundary never skips or repeats an event). Fetches `limit + 1` rows: the extra one only says
 * there is more. The workspace condition is always present: another workspace's events can
 * never be read, whatever key id is asked for.
 */
export async function selectAuditEvents(db: Db, f: AuditEventFilter): Promise<AuditEventRow[]> {
  const where = [sql`workspace_id = ${f.workspaceId}`];
  if (f.keyId !== undefined) where.push(sql`key_id = ${f.keyId}`);
  if (f.action !== undefined) where.push(sql`action = ${f.action}`);
  if (f.from !== undefined) where.push(sql`at >= ${f.from}`);
  if (f.to !== undefined) where.push(sql`at < ${f.to}`);
  if (f.beforeId !== undefined) where.push(sql`id < ${f.beforeId}::bigint`);
  const { rows } = await db.query<AuditEventRow>(
    sql`SELECT id::text AS id, at, action, actor, ip, user_agent, key_id, details
          FROM key_audit_events WHERE ${sql.join(where, sql` AND `)}
         ORDER BY key_audit_events.id DESC LIMIT ${f.limit + 1}`,
  );
  return rows;
}

/** A key that authenticated, with what the request pipeline needs of its workspace. */
export interface AuthenticatedKey {
  id: string;
  label: string;
  scopes: string[];
  state: KeyState;
  prefix: string;
  lastFour: string;
  createdAt: Date;
  expiresAt: Date | null;
  graceEndsAt: Date | null;
  /** As of when the key was loaded into this process's cache (at most the cache TTL old). */
  lastUsedAt: Date | null;
  successorId: string | null;
  workspace: {
    id: string;
    name: string;
    plan: PlanName;
    trialEndsAt: Date | null;
    status: 'active' | 'suspended';
    rotationPolicyDays: number;
  };
}

interface VerifiedKeyRow {
  id: string;
  label: string;
  scopes: string[];
  state: KeyState;
  prefix: string;
  last_four: string;
  created_at: Date;
  expires_at: Date | null;
  grace_ends_at: Date | null;
  last_used_at: Date | null;
  successor_id: string | null;
  ws_id: string;
  ws_name: string;
  ws_plan: PlanName;
  ws_trial_ends_at: Date | null;
  ws_status: 'active' | 'suspended';
  ws_rotation_policy_days: number;
}

/**
 * The key whose hash is `keyHash`, with its workspace, in one indexed query (the verifier's
 * cache miss, key-verifier.ts); null when no key has that hash. Whether it authenticates is
 * the verifier's business.
 */
export async function findKeyByHash(db: Queryable, keyHash: string): Promise<AuthenticatedKey | null> {
  const res = await db.query<VerifiedKeyRow>(
    sql`SELECT k.id, k.label, k.scopes, k.state, k.prefix, k.last_four, k.created_at, k.expires_at, k.grace_ends_at,
            k.last_used_at, k.successor_id,
            w.id AS ws_id, w.name AS ws_name, w.plan AS ws_plan, w.trial_ends_at AS ws_trial_ends_at,
            w.status AS ws_status, w.rotation_policy_days AS ws_rotation_policy_days
       FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
      WHERE k.key_hash = ${keyHash}`,
  );
  const r = res.rows[0];
  if (!r) return null;
  return {
    id: r.id,
    label: r.label,
    scopes: r.scopes,
    state: r.state,
    prefix: r.prefix,
    lastFour: r.last_four,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    graceEndsAt: r.grace_ends_at,
    lastUsedAt: r.last_used_at,
    successorId: r.successor_id,
    workspace: {
      id: r.ws_id,
      name: r.ws_name,
      plan: r.ws_plan,
      trialEndsAt: r.ws_trial_ends_at,
      status: r.ws_status,
      rotationPolicyDays: r.ws_rotation_policy_days,
    },
  };
}
