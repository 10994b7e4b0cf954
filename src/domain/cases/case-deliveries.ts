import type { Db } from '../../db/pool.js';

/** The workflow events a change of cases after their creation sends. */
export type CaseChangeEvent = 'case.status_changed' | 'case.updated' | 'case.triaged';

/** Options of {@link CaseChangeDeliveries.record}. */
export interface CaseChangeOptions {
  /**
   * The workflow whose tracker made the change (status flowing back): it is not told back.
   * @defaultValue none
   */
  exceptWorkflowId?: string;
}

/**
 * How a change of cases reaches the workflows (docs/workflows.md#when-deliveries-happen): a
 * status, owner or tags change, an expired acceptance, a triage answer, a tracker's status
 * flowing back. The workflows area provides it (cases do not import it). The deliveries are recorded in the
 * transaction that changes the cases, so a crash after its commit loses no event, and queued
 * after the commit (the maintenance sweep queues any that never were). `R`: what was recorded,
 * handed from `record` to `queue`.
 */
export interface CaseChangeDeliveries<R = unknown> {
  /** In the changing transaction: records the deliveries of a workspace's changed cases. */
  record(
    tx: Db,
    workspaceId: string,
    caseIds: string[],
    event: CaseChangeEvent,
    options?: CaseChangeOptions,
  ): Promise<R>;
  /** After the commit: queues what `record` recorded. Never fails the change (it is stored). */
  queue(recorded: R): Promise<unknown>;
}

/** For a caller that tells no workflow (tools, tests of the cases area alone). */
export const NO_CASE_DELIVERIES: CaseChangeDeliveries<null> = {
  record: async () => null,
  queue: async () => undefined,
};
