import type { Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { basisOf, openDueLookupSql } from '../cases/case-due-dates.js';
import { breachCandidatesSql } from '../cases/sla-breach-candidates.js';
import { groupBy } from '../../lib/group-by.js';
import { recordCaseDeliveries } from './trigger.js';

/**
 * `case.sla_breached` (docs/workflows.md#when-deliveries-happen): once per breach, an open or
 * in-progress case past its due date is told to the workflows whose rule it matches (or that
 * have an issue of it).
 *
 * Exactly once, however many worker processes sweep at the same time: a sweep claims breaches by
 * setting `sla_breach_due_at` to the due date it announces, under `FOR UPDATE SKIP LOCKED`, and
 * records the deliveries in the same transaction, so a claim never commits without its deliveries
 * and a committed claim is never taken again (a concurrent sweep skips the locked rows and, after
 * the commit, no longer matches them: only cases with no announced breach are candidates). A
 * change that moves a due date later than the one announced clears the announcement (a policy
 * change, a triage, a sighting, a KEV load, a reopen), so the new date passing is a new breach; a
 * date moved earlier is the same breach. The deliveries are queued after the commit; a queue that is down leaves them to the
 * lost-deliveries sweep.
 */

/** How many breaches one transaction claims. */
export const SLA_BREACH_BATCH = 500;

export interface SlaBreachSweepDeps {
  pool: Pool;
  enqueue: (workflowId: string, deliveryIds: string[]) => Promise<void>;
  onEnqueueFailed?: (err: unknown, workflowId: string, deliveries: number) => void;
}

/** Claims up to `limit` breaches at `now` and records their deliveries, in one transaction. */
async function claimBatch(
  pool: Pool,
  now: Date,
  limit: number,
): Promise<{ claimed: number; deliveries: Map<string, string[]> }> {
  return withTransaction(pool, async (tx) => {
    // The candidates first, then the claim by primary key: as one statement, the planner matched
    // them against every case of the table (12 s at 1,000,000 cases with none due).
    // Its walks are cheap but many: JIT compiling them cost seconds a sweep (4.7 s with none due).
    await tx.query(sql`SET LOCAL jit = off`);
    const candidates = await tx.query<{ id: string }>(breachCandidatesSql(now, limit));
    if (candidates.rows.length === 0) return { claimed: 0, deliveries: new Map() };
    const { rows } = await tx.query<{ id: string; workspace_id: string }>(sql`
WITH due AS (
  SELECT c.id FROM cases c
  WHERE c.id = ANY(${candidates.rows.map((r) => r.id)}::uuid[])
    AND c.status IN ('open', 'in_progress') AND c.sla_breach_due_at IS NULL
  LIMIT ${limit}
  FOR UPDATE OF c SKIP LOCKED
)
UPDATE cases c SET sla_breach_due_at = ${openDueLookupSql(basisOf(sql`c`), sql`c.workspace_id`)}
FROM due WHERE c.id = due.id
RETURNING c.id, c.workspace_id`);
    const deliveries = new Map<string, string[]>();
    for (const [workspaceId, caseIds] of groupBy(
      rows,
      (r) => r.workspace_id,
      (r) => r.id,
    ))
      for (const [workflowId, ids] of await recordCaseDeliveries(
        tx,
        workspaceId,
        caseIds,
        'case.sla_breached',
      ))
        deliveries.set(workflowId, ids);
    return { claimed: rows.length, deliveries };
  });
}

/**
 * Announces every breach at `now` not yet announced, a batch per transaction. Returns how many
 * breaches it claimed and how many deliveries it recorded.
 */
export async function announceSlaBreaches(
  deps: SlaBreachSweepDeps,
  now: Date,
  batch = SLA_BREACH_BATCH,
): Promise<{ breaches: number; deliveries: number }> {
  let breaches = 0;
  let deliveries = 0;
  for (;;) {
    const claimed = await claimBatch(deps.pool, now, batch);
    breaches += claimed.claimed;
    for (const [workflowId, ids] of claimed.deliveries) {
      deliveries += ids.length;
      await deps
        .enqueue(workflowId, ids)
        .catch((err: unknown) => deps.onEnqueueFailed?.(err, workflowId, ids.length));
    }
    if (claimed.claimed < batch) return { breaches, deliveries };
  }
}
