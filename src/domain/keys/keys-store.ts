import type { Queryable } from '../../db/pool.js';
import type { AuditAction } from '../../db/entities/index.js';

/**
 * The key-version counter (migration m008): moved by triggers on every change to what a
 * process caches about a key or workspace. Returned as text: a bigint compared for equality.
 */
export async function readKeyVersion(db: Queryable): Promise<string> {
  const res = await db.query<{ version: string }>(
    'SELECT version::text AS version FROM key_version WHERE id = 1',
  );
  return res.rows[0]?.version ?? '0';
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
export async function selectAuditEvents(db: Queryable, f: AuditEventFilter): Promise<AuditEventRow[]> {
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
