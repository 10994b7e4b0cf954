import type { Db } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import type { CaseChangeDeliveries } from './case-deliveries.js';

/**
 * Risk acceptances that ran out (docs/cases.md#risk-acceptance): each `risk_accepted` case whose
 * `expiresAt` has passed reopens, with a history entry by `system` for the reason
 * `acceptance_expired`, and the workflows whose rule it matches hear `case.status_changed`: the
 * reopening, the case's new due date and its workflow deliveries commit together, so a crash
 * after the commit loses no event (the maintenance sweep queues deliveries left unqueued).
 */

/** Cases reopened by one run, by workspace (what the workflow trigger is told). */
export type ExpiredAcceptances = Map<string, string[]>;

/**
 * Reopens up to `limit` cases whose acceptance expired by `now`, in one statement: the rows are
 * claimed with `FOR UPDATE SKIP LOCKED` and re-checked by the UPDATE, so any number of workers
 * may run it at once and each case reopens once, with one history entry. A case someone is
 * changing at that moment is skipped and reopens on the next run if it is still accepted.
 */
export async function reopenExpiredAcceptances(db: Db, now: Date, limit = 1000): Promise<ExpiredAcceptances> {
  const { rows } = await db.query<{ id: string; workspace_id: string }>(
    sql`WITH due AS (
          SELECT id FROM cases
           WHERE status = 'risk_accepted' AND acceptance_expires_at <= ${now}
           ORDER BY acceptance_expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED),
        reopened AS (
          UPDATE cases c SET status = 'open', acceptance_expires_at = NULL, acceptance_note = NULL, updated_at = now()
            FROM due WHERE c.id = due.id AND c.status = 'risk_accepted'
          RETURNING c.id, c.workspace_id),
        history AS (
          INSERT INTO case_status_history (case_id, from_status, to_status, actor, reason, note)
          SELECT id, 'risk_accepted', 'open', 'system', 'acceptance_expired', NULL FROM reopened)
        SELECT id, workspace_id FROM reopened`,
  );
  const out: ExpiredAcceptances = new Map();
  for (const r of rows) out.set(r.workspace_id, [...(out.get(r.workspace_id) ?? []), r.id]);
  return out;
}

/**
 * Reopens every expired acceptance, a `limit` at a time, each batch in one transaction with the
 * cases' due dates and workflow deliveries; the deliveries are queued after each commit. Returns
 * how many reopened.
 */
export async function expireAcceptances<R>(
  db: Db,
  now: Date,
  deliveries: CaseChangeDeliveries<R>,
  limit = 1000,
): Promise<number> {
  let total = 0;
  for (;;) {
    const { n, recorded } = await withTransaction(db, async (tx) => {
      const batch = await reopenExpiredAcceptances(tx, now, limit);
      const recorded: R[] = [];
      let n = 0;
      for (const [workspaceId, ids] of batch) {
        n += ids.length;
        recorded.push(await deliveries.record(tx, workspaceId, ids, 'case.status_changed'));
      }
      return { n, recorded };
    });
    for (const r of recorded) await deliveries.queue(r);
    total += n;
    if (n < limit) return total;
  }
}
