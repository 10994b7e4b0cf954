import { withTransaction, type Pool } from '../../src/db/pool.js';
import type { CaseChangeOptions } from '../../src/domain/cases/case-deliveries.js';
import { recordCaseDeliveries, type WorkflowTrigger } from '../../src/domain/workflows/trigger.js';

/**
 * Tells the workflows that `caseIds` changed, as a change of cases does
 * (docs/workflows.md#when-deliveries-happen): records the `event` deliveries in a transaction of
 * their own, then queues them through `trigger`. For tests and benches that exercise deliveries
 * without making the change itself. Returns how many deliveries were queued.
 */
export async function casesChanged(
  pool: Pool,
  trigger: Pick<WorkflowTrigger, 'queueRecorded'>,
  workspaceId: string,
  caseIds: string[],
  event: Parameters<typeof recordCaseDeliveries>[3],
  options: CaseChangeOptions = {},
): Promise<number> {
  if (caseIds.length === 0) return 0;
  return trigger.queueRecorded(
    await withTransaction(pool, (tx) => recordCaseDeliveries(tx, workspaceId, caseIds, event, options)),
  );
}
