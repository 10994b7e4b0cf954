import type { Db, Pool } from '../../db/pool.js';
import { groupBy } from '../../lib/group-by.js';
import type { CaseChangeOptions } from '../cases/case-deliveries.js';
import type { WorkflowEvent } from './types.js';
import { insertMatchingDeliveries, pendingDeliveriesOf, type CaseSelection } from './delivery-store.js';
import { enabledWorkflows } from './workflow-store.js';

/**
 * How deliveries of case changes are queued (docs/workflows.md#when-deliveries-happen). Every
 * change of cases records its deliveries in the transaction that makes it
 * ({@link recordScanDeliveries}, {@link recordCaseDeliveries}: for each enabled workflow of the
 * workspace, one INSERT … SELECT evaluates the rule over the changed cases in SQL and records a
 * pending delivery per match, or per case already linked), and has them queued here once it
 * committed; the maintenance sweep queues any that never were. Queuing twice is harmless: a
 * delivery's job id is its own id, and deliveries to issue trackers are state-based and locked
 * per (workflow, case), so a case still gets exactly one issue.
 */
export interface WorkflowTrigger {
  /**
   * After `completeScan`: queues the deliveries its completion recorded for the cases it
   * created, reopened and resolved ({@link recordScanDeliveries}); records none itself.
   */
  scanCompleted(workspaceId: string, scanId: string): Promise<number>;
  /**
   * After the commit of a transaction that recorded deliveries ({@link recordCaseDeliveries}):
   * queues them. A queue that is down leaves them to the maintenance sweep; never rejects.
   */
  queueRecorded(recorded: RecordedDeliveries): Promise<number>;
}

/** Deliveries a transaction recorded, by workflow id: queued once it committed. */
export type RecordedDeliveries = Map<string, string[]>;

export function createWorkflowTrigger(deps: {
  pool: Pool;
  enqueue: (workflowId: string, deliveryIds: string[]) => Promise<void>;
  /** Told when an enqueue failed (the queue is down): the deliveries wait for the sweep. */
  onEnqueueFailed?: (err: unknown, workflowId: string, deliveries: number) => void;
}): WorkflowTrigger {
  async function queueRecorded(byWorkflow: RecordedDeliveries) {
    let total = 0;
    for (const [workflowId, ids] of byWorkflow) {
      if (ids.length === 0) continue;
      await deps
        .enqueue(workflowId, ids)
        .catch((err: unknown) => deps.onEnqueueFailed?.(err, workflowId, ids.length));
      total += ids.length;
    }
    return total;
  }
  async function enqueueRecorded(workspaceId: string, selection: CaseSelection, event: WorkflowEvent) {
    const pending = await pendingDeliveriesOf(deps.pool, workspaceId, selection, event);
    return queueRecorded(
      groupBy(
        pending,
        (d) => d.workflow_id,
        (d) => d.id,
      ),
    );
  }
  return {
    scanCompleted: async (workspaceId, scanId) =>
      (await enqueueRecorded(workspaceId, { createdByScan: scanId }, 'case.created')) +
      (await enqueueRecorded(workspaceId, { reopenedByScan: scanId }, 'case.status_changed')) +
      (await enqueueRecorded(workspaceId, { resolvedByScan: scanId }, 'case.status_changed')),
    queueRecorded,
  };
}

/** What a scan's completion changed: how many cases it created, reopened and resolved. */
export interface ScanCaseChanges {
  created: number;
  reopened: number;
  resolved: number;
}

/**
 * Records, in the completion transaction `tx` of a scan, one pending delivery per enabled
 * workflow for each case the scan created (`case.created`), reopened or resolved
 * (`case.status_changed`) that the workflow's rule matches or that has an issue in it
 * (docs/workflows.md#when-deliveries-happen): the cases and their deliveries commit together,
 * so a crash after the commit loses no event. Call it after the duplicates are marked (a rule
 * leaves duplicates out). {@link WorkflowTrigger.scanCompleted} queues them after the commit
 * (and the maintenance sweep does if that never happens). Returns how many it recorded.
 */
export async function recordScanDeliveries(
  tx: Db,
  workspaceId: string,
  scanId: string,
  changed: ScanCaseChanges,
): Promise<number> {
  if (changed.created + changed.reopened + changed.resolved === 0) return 0;
  const steps: [CaseSelection, WorkflowEvent, number][] = [
    [{ createdByScan: scanId }, 'case.created', changed.created],
    [{ reopenedByScan: scanId }, 'case.status_changed', changed.reopened],
    [{ resolvedByScan: scanId }, 'case.status_changed', changed.resolved],
  ];
  let total = 0;
  for (const w of await enabledWorkflows(tx, workspaceId))
    for (const [selection, event, n] of steps)
      if (n > 0) total += (await insertMatchingDeliveries(tx, w, selection, event)).length;
  return total;
}

/**
 * Records, in the transaction `tx` that changed them, one pending `event` delivery per enabled
 * workflow for each of the workspace's `caseIds` that the workflow's rule matches or that has an
 * issue in it (but `exceptWorkflowId`): the change and its deliveries commit together. Queue them after the commit with
 * {@link WorkflowTrigger.queueRecorded} (the maintenance sweep does if that never happens).
 */
export async function recordCaseDeliveries(
  tx: Db,
  workspaceId: string,
  caseIds: string[],
  event: Exclude<WorkflowEvent, 'workflow.test' | 'case.created'>,
  options: CaseChangeOptions = {},
): Promise<RecordedDeliveries> {
  const recorded: RecordedDeliveries = new Map();
  if (caseIds.length === 0) return recorded;
  for (const w of await enabledWorkflows(tx, workspaceId)) {
    // Status flowing back: the tracker that told us is not told back.
    if (w.id === options.exceptWorkflowId) continue;
    const ids = await insertMatchingDeliveries(tx, w, { caseIds }, event);
    if (ids.length > 0) recorded.set(w.id, ids);
  }
  return recorded;
}
