import type { Queryable } from '../../db/pool.js';
import { sql, type SqlFragment } from '../../db/sql.js';
import { isUuid } from '../../lib/ids.js';
import { ruleWhere } from './rule-sql.js';
import type { WorkflowEvent } from './types.js';
import type { Workflow } from './workflow.js';

/**
 * The deliveries (m013's `workflow_deliveries`): one row per (event, case, workflow), the outbox
 * a delivery job works from and records its attempts in.
 */

/** Which cases of the workspace a trigger is about. */
export type CaseSelection =
  | { caseIds: string[] }
  /** The cases a completed scan created (a re-upload of the same file creates none). */
  | { createdByScan: string }
  /** The resolved cases a completed scan saw again and reopened. */
  | { reopenedByScan: string }
  /** The cases a completed rescan no longer saw and resolved (docs/ingestion.md#rescans). */
  | { resolvedByScan: string };

/** The condition on `cases c` that keeps the cases of `selection`, or null when it selects none. */
function selectionWhere(selection: CaseSelection): SqlFragment | null {
  if ('createdByScan' in selection) {
    if (!isUuid(selection.createdByScan)) return null;
    return sql`c.first_scan_id = ${selection.createdByScan}::uuid`;
  }
  if ('reopenedByScan' in selection) {
    if (!isUuid(selection.reopenedByScan)) return null;
    return sql`c.id IN (SELECT h.case_id FROM case_status_history h WHERE h.actor = ${`scan:${selection.reopenedByScan}`}
                          AND h.to_status = 'open')`;
  }
  if ('resolvedByScan' in selection) {
    if (!isUuid(selection.resolvedByScan)) return null;
    return sql`c.id IN (SELECT h.case_id FROM case_status_history h WHERE h.actor = ${`scan:${selection.resolvedByScan}`}
                          AND h.to_status = 'resolved')`;
  }
  const ids = selection.caseIds.filter(isUuid);
  return ids.length === 0 ? null : sql`c.id = ANY(${ids}::uuid[])`;
}

/**
 * Inserts one pending delivery for each case of `selection` that matches the workflow's rule,
 * or that already has an issue in it (a linked case keeps its issue up to date even when it
 * stops matching, e.g. once resolved). One statement per workflow; returns the delivery ids.
 */
export async function insertMatchingDeliveries(
  db: Queryable,
  w: Workflow,
  selection: CaseSelection,
  event: WorkflowEvent,
): Promise<string[]> {
  const scope = selectionWhere(selection);
  if (!scope) return [];
  const rule = ruleWhere(w.rule);
  const matches = rule.length > 0 ? sql.join(rule, sql` AND `) : sql`true`;
  const { rows } = await db.query<{ id: string }>(
    sql`INSERT INTO workflow_deliveries (workflow_id, workspace_id, case_id, event)
        SELECT ${w.id}::uuid, ${w.workspaceId}::uuid, c.id, ${event}::text FROM cases c
        WHERE c.workspace_id = ${w.workspaceId} AND ${scope}
          AND ((${matches})
               OR EXISTS (SELECT 1 FROM workflow_links l WHERE l.workflow_id = ${w.id} AND l.case_id = c.id))
        ORDER BY c.seq
        RETURNING id`,
  );
  return rows.map((r) => r.id);
}

/**
 * The pending deliveries of `event` for the cases of `selection`: those a transaction recorded
 * for its own change, queued once it committed.
 */
export async function pendingDeliveriesOf(
  db: Queryable,
  workspaceId: string,
  selection: CaseSelection,
  event: WorkflowEvent,
): Promise<{ id: string; workflow_id: string }[]> {
  const scope = selectionWhere(selection);
  if (!scope) return [];
  const { rows } = await db.query<{ id: string; workflow_id: string }>(
    sql`SELECT d.id, d.workflow_id FROM workflow_deliveries d JOIN cases c ON c.id = d.case_id
        WHERE d.workspace_id = ${workspaceId} AND d.event = ${event} AND d.status = 'pending'
          AND c.workspace_id = ${workspaceId} AND ${scope}
        ORDER BY d.seq`,
  );
  return rows;
}

export async function insertTestDelivery(db: Queryable, w: Workflow): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    sql`INSERT INTO workflow_deliveries (workflow_id, workspace_id, event)
        VALUES (${w.id}, ${w.workspaceId}, 'workflow.test') RETURNING id`,
  );
  return rows[0]!.id;
}

export interface DeliveryRow {
  id: string;
  seq: string;
  workflow_id: string;
  workspace_id: string;
  case_id: string | null;
  event: WorkflowEvent;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  response_code: number | null;
  error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  finished_at: Date | null;
}

export async function getDelivery(db: Queryable, id: string): Promise<DeliveryRow | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<DeliveryRow>(sql`SELECT * FROM workflow_deliveries WHERE id = ${id}`);
  return rows[0] ?? null;
}

/**
 * The oldest delivery of `d`'s case in `d`'s workflow still pending before `d` (the case's head,
 * which `d` waits behind), or null when `d` is the head itself.
 */
export async function pendingHeadBefore(
  db: Queryable,
  d: DeliveryRow,
): Promise<Pick<DeliveryRow, 'id' | 'seq' | 'next_attempt_at'> | null> {
  const { rows } = await db.query<Pick<DeliveryRow, 'id' | 'seq' | 'next_attempt_at'>>(
    sql`SELECT id, seq, next_attempt_at FROM workflow_deliveries
        WHERE workflow_id = ${d.workflow_id} AND case_id = ${d.case_id} AND status = 'pending' AND seq < ${d.seq}
        ORDER BY seq LIMIT 1`,
  );
  return rows[0] ?? null;
}

export async function listDeliveries(
  db: Queryable,
  workflowId: string,
  q: { limit: number; before?: string },
): Promise<DeliveryRow[]> {
  const before = q.before ? sql`AND seq < ${q.before}::bigint` : sql.empty;
  const { rows } = await db.query<DeliveryRow>(
    sql`SELECT * FROM workflow_deliveries WHERE workflow_id = ${workflowId} ${before}
        ORDER BY seq DESC LIMIT ${q.limit + 1}`,
  );
  return rows;
}

/** An attempt's outcome, as {@link recordAttempt} stores it. */
export interface AttemptRecord {
  workflowId: string;
  status: DeliveryRow['status'];
  responseCode: number | null;
  error: string | null;
  nextAttemptAt: Date | null;
}

/** Records an attempt's outcome on the delivery and, as its latest, on the workflow. */
export async function recordAttempt(db: Queryable, ids: string[], o: AttemptRecord): Promise<void> {
  await db.query(
    sql`UPDATE workflow_deliveries SET status = ${o.status}, attempts = attempts + 1,
          response_code = ${o.responseCode}, error = ${o.error}, next_attempt_at = ${o.nextAttemptAt},
          finished_at = CASE WHEN ${o.status}::text = 'pending' THEN NULL ELSE now() END
        WHERE id = ANY(${ids}::uuid[])`,
  );
  await db.query(
    sql`UPDATE workflows SET last_delivery_status = ${o.status}, last_delivery_at = now(),
          last_error = CASE WHEN ${o.status}::text = 'delivered' THEN last_error ELSE ${o.error} END
        WHERE id = ${o.workflowId}`,
  );
}

/** A pending delivery's next try, without counting an attempt (the rate limit held it back). */
export async function setNextAttempt(db: Queryable, ids: string[], at: Date): Promise<void> {
  await db.query(
    sql`UPDATE workflow_deliveries SET next_attempt_at = ${at}
        WHERE id = ANY(${ids}::uuid[]) AND status = 'pending'`,
  );
}

/**
 * Pending deliveries whose job may be gone (a crash between the trigger's INSERT and its enqueue,
 * or a queue that lost its data): created more than `olderThanMs` ago and not waiting for a
 * known next attempt. Re-enqueued by id, which the queue ignores for a job it still has.
 */
export async function orphanedDeliveries(
  db: Queryable,
  olderThanMs: number,
  limit = 10_000,
): Promise<{ id: string; workflow_id: string }[]> {
  const { rows } = await db.query<{ id: string; workflow_id: string }>(
    sql`SELECT id, workflow_id FROM workflow_deliveries
        WHERE status = 'pending' AND created_at < now() - make_interval(secs => ${olderThanMs}::double precision / 1000)
          AND (next_attempt_at IS NULL OR next_attempt_at < now() - interval '1 minute')
        ORDER BY seq LIMIT ${limit}`,
  );
  return rows;
}
