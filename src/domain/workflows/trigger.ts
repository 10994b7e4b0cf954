import type { Db, Pool } from '../../db/pool.js';
import type { WorkflowEvent } from './types.js';
import { insertMatchingDeliveries, pendingDeliveriesOf, type CaseSelection } from './delivery-store.js';
import { enabledWorkflows } from './workflow-store.js';

/**
 * THE hook other areas call when cases change (docs/workflows.md#when-deliveries-happen): after a scan completed (its new and
 * reopened cases), after a case's triage answer, after a status change. For each enabled
 * workflow of the workspace, one INSERT … SELECT evaluates the rule over the selected cases in
 * SQL and records a pending delivery per match (or per case already linked), then queues them.
 * Calling it twice for the same change is harmless: deliveries to issue trackers are
 * state-based and locked per (workflow, case), so a case still gets exactly one issue.
 */
export interface WorkflowTrigger {
  /**
   * After `completeScan`: the cases the scan created or reopened; and the deliveries of the
   * cases it resolved, which its completion recorded ({@link recordScanResolutions}), are queued.
   */
  scanCompleted(workspaceId: string, scanId: string): Promise<number>;
  /**
   * After cases changed. `exceptWorkflowId`: the workflow whose inbound webhook made the change
   * (never echoed back to it).
   */
  casesChanged(
    workspaceId: string,
    caseIds: string[],
    event: Exclude<WorkflowEvent, 'workflow.test' | 'case.created'>,
    options?: { exceptWorkflowId?: string },
  ): Promise<number>;
}

export function createWorkflowTrigger(deps: {
  pool: Pool;
  enqueue: (workflowId: string, deliveryIds: string[]) => Promise<void>;
  /** Told when an enqueue failed (the queue is down): the deliveries wait for the sweep. */
  onEnqueueFailed?: (err: unknown, workflowId: string, deliveries: number) => void;
}): WorkflowTrigger {
  async function run(
    workspaceId: string,
    selection: CaseSelection,
    event: WorkflowEvent,
    except?: string,
  ): Promise<number> {
    let total = 0;
    for (const w of await enabledWorkflows(deps.pool, workspaceId)) {
      if (w.id === except) continue;
      const ids = await insertMatchingDeliveries(deps.pool, w, selection, event);
      // The change that called us is committed, and so are these deliveries: a queue that is down
      // must not turn its answer into a failure (a client would retry a stored change). The
      // maintenance sweep queues pending deliveries without a job (lost-deliveries.ts).
      await deps.enqueue(w.id, ids).catch((err: unknown) => deps.onEnqueueFailed?.(err, w.id, ids.length));
      total += ids.length;
    }
    return total;
  }
  async function enqueueRecorded(workspaceId: string, selection: CaseSelection, event: WorkflowEvent) {
    const byWorkflow = new Map<string, string[]>();
    for (const d of await pendingDeliveriesOf(deps.pool, workspaceId, selection, event))
      byWorkflow.set(d.workflow_id, [...(byWorkflow.get(d.workflow_id) ?? []), d.id]);
    for (const [workflowId, ids] of byWorkflow)
      await deps
        .enqueue(workflowId, ids)
        .catch((err: unknown) => deps.onEnqueueFailed?.(err, workflowId, ids.length));
    return [...byWorkflow.values()].reduce((n, ids) => n + ids.length, 0);
  }
  return {
    scanCompleted: async (workspaceId, scanId) =>
      (await run(workspaceId, { createdByScan: scanId }, 'case.created')) +
      (await run(workspaceId, { reopenedByScan: scanId }, 'case.status_changed')) +
      (await enqueueRecorded(workspaceId, { resolvedByScan: scanId }, 'case.status_changed')),
    casesChanged: (workspaceId, caseIds, event, options = {}) =>
      caseIds.length === 0
        ? Promise.resolve(0)
        : run(workspaceId, { caseIds }, event, options.exceptWorkflowId),
  };
}

/**
 * Records, in the completion transaction `tx` of a rescan, one pending `case.status_changed`
 * delivery per enabled workflow for each case the scan resolved that the workflow's rule matches
 * or that has an issue in it (docs/ingestion.md#rescans): the resolutions and their deliveries
 * commit together. {@link WorkflowTrigger.scanCompleted} queues them after the commit (and the
 * maintenance sweep does if that never happens). Returns how many it recorded.
 */
export async function recordScanResolutions(tx: Db, workspaceId: string, scanId: string): Promise<number> {
  let total = 0;
  for (const w of await enabledWorkflows(tx, workspaceId))
    total += (await insertMatchingDeliveries(tx, w, { resolvedByScan: scanId }, 'case.status_changed'))
      .length;
  return total;
}
