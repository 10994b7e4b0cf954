import { LockMode } from '@mikro-orm/core';
import type { Em } from '../../db/orm.js';
import type { Db, Queryable } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import {
  ApiKeySchema,
  KeyAuditEventSchema,
  type ApiKey,
  type AuditAction,
  type KeyState,
  type PlanName,
  type KeyAuditEvent,
} from '../../db/entities/index.js';

/**
 * The keys area's tables: `api_keys`, `key_audit_events` and `key_reveals` (and the `key_version`
 * counter); nothing else names them. The verifier's hot lookup (`findKeyByHash`) reads the key's workspace
 * row with it, in the same indexed query.
 *
 * Two kinds of function, one per way the area reaches the database:
 * - `(em, …)`: the MikroORM unit of work the key use cases run in (`em` is a transaction's
 *   entity manager; MikroORM maps `api_keys` and `key_audit_events` and stays inside this file
 *   and the services that own a fork).
 * - `(db, …)`: set-based statements on the pool or a transaction client.
 */

/** A key of `workspaceId`, or null; `lock` takes its row lock for the caller's transaction. */
export async function findKey(
  em: Em,
  workspaceId: string,
  keyId: string,
  lock = false,
): Promise<ApiKey | null> {
  return em.findOne(
    ApiKeySchema,
    { id: keyId, workspaceId },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
  );
}

/** A workspace's keys, newest first. */
export async function listKeys(em: Em, workspaceId: string): Promise<ApiKey[]> {
  return em.find(ApiKeySchema, { workspaceId }, { orderBy: { createdAt: 'desc', id: 'asc' } });
}

/** Adds a key to the unit of work (written at the next flush). */
export function addKey(em: Em, key: ApiKey): ApiKey {
  return em.create(ApiKeySchema, key);
}

/** Adds an audit event to the unit of work (DECISIONS §4: who, when, from where). */
export function addAuditEvent(
  em: Em,
  event: Omit<KeyAuditEvent, 'at' | 'details'> & { details?: Record<string, unknown> },
): void {
  em.create(KeyAuditEventSchema, { ...event, details: event.details ?? {}, at: new Date() });
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

/** Stores a reveal row in `em`'s transaction, after flushing the key it names. */
export async function addReveal(em: Em, row: RevealRow): Promise<void> {
  await em.flush();
  await em
    .getConnection()
    .execute(
      `INSERT INTO key_reveals (token_hash, key_id, workspace_id, sealed_secret, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
      [row.tokenHash, row.keyId, row.workspaceId, row.sealedSecret, row.createdAt, row.expiresAt],
      'run',
      em.getTransactionContext(),
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
 * `revealedAt` is recorded only when the caller says the reveal is usable.
 */
export async function takeReveal(
  em: Em,
  tokenHash: string,
  workspaceId: string,
  usable: (row: HeldReveal) => Date | null,
): Promise<HeldReveal | null> {
  const conn = em.getConnection();
  const ctx = em.getTransactionContext();
  const rows = await conn.execute<
    {
      key_id: string;
      sealed_secret: string | null;
      expires_at: string | Date;
      revealed_at: string | Date | null;
    }[]
  >(
    `SELECT key_id, sealed_secret, expires_at, revealed_at FROM key_reveals
      WHERE token_hash = ? AND workspace_id = ? FOR UPDATE`,
    [tokenHash, workspaceId],
    'all',
    ctx,
  );
  const r = rows[0];
  if (!r) return null;
  const row: HeldReveal = {
    keyId: r.key_id,
    sealedSecret: r.sealed_secret,
    expiresAt: new Date(r.expires_at),
    revealedAt: r.revealed_at ? new Date(r.revealed_at) : null,
  };
  await conn.execute(
    `UPDATE key_reveals SET sealed_secret = NULL, revealed_at = COALESCE(revealed_at, ?) WHERE token_hash = ?`,
    [usable(row), tokenHash],
    'run',
    ctx,
  );
  return row;
}

/**
 * Keys of a workspace that authenticate at `now` (within expiry and grace), counted apart:
 * `active` ones and `rotating` ones (a rotated key in its grace period), so the console's
 * "Active keys" does not count a key that is on its way out (issue 12 item 8).
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
    'SELECT version::text AS version FROM key_version WHERE id = 1',
  );
  return res.rows[0]?.version ?? '0';
}

/**
 * Appends one audit event with a statement of its own (for areas that do not use the entity
 * manager, e.g. workflows): on a transaction client it commits with the change it records.
 */
export async function insertAuditEvent(db: Queryable, e: Omit<KeyAuditEvent, 'id' | 'at'>): Promise<void> {
  await db.query(
    `INSERT INTO key_audit_events (workspace_id, key_id, action, actor, ip, user_agent, details, at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now())`,
    [e.workspaceId, e.keyId, e.action, e.actor, e.ip, e.userAgent, JSON.stringify(e.details)],
  );
}

// The audit log read back (DECISIONS §10): the only query that reads `key_audit_events`.

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
  const where = ['workspace_id = $1'];
  const args: unknown[] = [f.workspaceId];
  const add = (sql: string, value: unknown) => {
    args.push(value);
    where.push(sql.replace('?', `$${args.length}`));
  };
  if (f.keyId !== undefined) add('key_id = ?', f.keyId);
  if (f.action !== undefined) add('action = ?', f.action);
  if (f.from !== undefined) add('at >= ?', f.from);
  if (f.to !== undefined) add('at < ?', f.to);
  if (f.beforeId !== undefined) add('id < ?::bigint', f.beforeId);
  args.push(f.limit + 1);
  const { rows } = await db.query<AuditEventRow>(
    `SELECT id::text AS id, at, action, actor, ip, user_agent, key_id, details
       FROM key_audit_events WHERE ${where.join(' AND ')}
      ORDER BY key_audit_events.id DESC LIMIT $${args.length}`,
    args,
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
    `SELECT k.id, k.label, k.scopes, k.state, k.prefix, k.last_four, k.created_at, k.expires_at, k.grace_ends_at,
            k.last_used_at, k.successor_id,
            w.id AS ws_id, w.name AS ws_name, w.plan AS ws_plan, w.trial_ends_at AS ws_trial_ends_at,
            w.status AS ws_status, w.rotation_policy_days AS ws_rotation_policy_days
       FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
      WHERE k.key_hash = $1`,
    [keyHash],
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
