import type { Pool } from '../../db/pool.js';
import type { Actor } from '../keys/key-service.js';
import { getSlaPolicy, putSlaPolicy, type SlaPolicy, type SlaPolicyInput } from './sla-policy-store.js';

/**
 * The workspace SLA policy as the HTTP edge reads and replaces it (docs/cases.md#due-dates-and-sla),
 * bound once to the pool.
 */
export interface SlaPolicyService {
  /** The workspace's policy (the defaults until it sets one). */
  get(workspaceId: string): Promise<SlaPolicy>;
  /**
   * Replaces it and recomputes the due dates of its cases that are not resolved, in one
   * transaction, with an audit event by `actor` when the policy changed.
   */
  put(
    workspaceId: string,
    input: SlaPolicyInput,
    actor: Actor,
  ): Promise<{ policy: SlaPolicy; recomputed: number }>;
}

export function createSlaPolicyService(pool: Pool): SlaPolicyService {
  return {
    get: (workspaceId) => getSlaPolicy(pool, workspaceId),
    put: (workspaceId, input, actor) => putSlaPolicy(pool, workspaceId, input, actor),
  };
}
