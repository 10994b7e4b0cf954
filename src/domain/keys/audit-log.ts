import type { Db, Queryable } from '../../db/pool.js';
import type { AuditAction } from '../../db/entities/index.js';
import { invalidRequest, type FieldError } from '../../lib/errors.js';
import { seqCursor, seqPage, type Page } from '../../lib/cursor.js';
import { insertAuditEvent, selectAuditEvents, type AuditEventRow } from './keys-store.js';
import type { Actor } from './key-service.js';

/**
 * The audit log read back (docs/api.md#audit-log): key create, reveal, rotate, revoke, expiry and plan
 * changes, each with actor, time, address and user agent. Served by `GET /api/v1/audit-events`
 * and by Settings > Audit log, so both read it through this one function.
 */

/** An audit event as the API and the console show it. */
export interface AuditEventView {
  object: 'audit_event';
  id: string;
  at: string;
  action: AuditAction;
  /** `user:<id>`, `key:<id>`, `operator` or `system`. */
  actor: string;
  ip: string | null;
  userAgent: string | null;
  keyId: string | null;
  details: Record<string, unknown>;
}

/** The filters as they arrive (query strings): validated here, whoever calls. */
export interface AuditQuery {
  key?: string;
  action?: AuditAction;
  from?: string;
  to?: string;
  cursor?: string;
  limit?: number;
}

export const AUDIT_PAGE_SIZE = 50;
const DAY_MS = 86_400_000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A bound of the range: a UTC day (the whole day counts, so `to=2026-11-30` includes that day)
 * or an instant with its time zone. Returns the instant the bound stands for, `to` made exclusive.
 */
function bound(value: string, end: boolean): Date | null {
  if (DAY.test(value)) {
    const d = new Date(`${value}T00:00:00Z`);
    if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value) return null;
    return end ? new Date(d.getTime() + DAY_MS) : d;
  }
  if (!INSTANT.test(value)) return null;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return null;
  return end ? new Date(d.getTime() + 1) : d;
}

function range(q: AuditQuery): { from?: Date; to?: Date } {
  const errors: FieldError[] = [];
  const message = 'must be a date (YYYY-MM-DD, UTC) or an ISO 8601 instant with a time zone';
  const from = q.from === undefined ? undefined : bound(q.from, false);
  const to = q.to === undefined ? undefined : bound(q.to, true);
  if (from === null) errors.push({ path: '/querystring/from', message });
  if (to === null) errors.push({ path: '/querystring/to', message });
  if (errors.length === 0 && from && to && from.getTime() >= to.getTime())
    errors.push({ path: '/querystring/from', message: 'must not be after to' });
  if (errors.length > 0) throw invalidRequest(errors);
  return { ...(from ? { from } : {}), ...(to ? { to } : {}) };
}

function view(r: AuditEventRow): AuditEventView {
  return {
    object: 'audit_event',
    id: r.id,
    at: new Date(r.at).toISOString(),
    action: r.action,
    actor: r.actor,
    ip: r.ip,
    userAgent: r.user_agent,
    keyId: r.key_id,
    details: r.details ?? {},
  };
}

/**
 * One page of a workspace's audit log, newest first. A key id of another workspace simply
 * matches nothing (no existence leak); malformed filters or a tampered cursor are a 400 naming
 * the field.
 */
export async function listAuditEvents(
  db: Db,
  workspaceId: string,
  q: AuditQuery,
): Promise<Page<AuditEventView>> {
  const limit = q.limit ?? AUDIT_PAGE_SIZE;
  const { from, to } = range(q);
  const beforeId = q.cursor === undefined ? undefined : seqCursor(q.cursor);
  const rows = await selectAuditEvents(db, {
    workspaceId,
    limit,
    ...(q.key !== undefined ? { keyId: q.key } : {}),
    ...(q.action !== undefined ? { action: q.action } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    ...(beforeId !== undefined ? { beforeId } : {}),
  });
  const page = seqPage(
    rows.map((r) => ({ seq: r.id, row: r })),
    limit,
  );
  return { data: page.data.map((p) => view(p.row)), nextCursor: page.nextCursor };
}

/**
 * Records a change to something other than a key (a workflow) in the audit log, on `db` (a
 * transaction client, so the event commits or rolls back with the change). `details` must never
 * hold a credential or secret: callers pass ids, names and the names of changed parts.
 */
export async function recordAuditEvent(
  db: Queryable,
  workspaceId: string,
  action: AuditAction,
  actor: Actor,
  details: Record<string, unknown>,
): Promise<void> {
  await insertAuditEvent(db, { workspaceId, keyId: null, action, ...actor, details });
}

/** The audit log bound once to the pool, so the HTTP edge never sees it. */
export interface AuditLog {
  /** One page of a workspace's audit log ({@link listAuditEvents}). */
  list(workspaceId: string, q: AuditQuery): Promise<Page<AuditEventView>>;
}

/** {@link AuditLog} over `db`: plain delegation. */
export function createAuditLog(db: Db): AuditLog {
  return { list: (workspaceId, q) => listAuditEvents(db, workspaceId, q) };
}
