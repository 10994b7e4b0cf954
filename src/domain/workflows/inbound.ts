import { withTransaction, type Pool } from '../../db/pool.js';
import { AppError } from '../../lib/errors.js';
import { changeStatusIn } from '../cases/case-store.js';
import type { CaseChangeDeliveries } from '../cases/case-deliveries.js';
import { longestAcceptanceFrom } from '../cases/risk-acceptance.js';
import { getSlaPolicy } from '../cases/sla-policy-store.js';
import type { CaseStatus } from '../cases/case-status.js';
import { firstSightOfInbound } from './inbound-event-store.js';
import { findLinkByExternalId, updateLink } from './link-store.js';
import { unsealWorkflowSecret } from './sealing.js';
import { verifyHubSignature } from './signing.js';
import { targetKind, WORKFLOW_KINDS, type WorkflowKind } from './targets/registry.js';
import { headerValue, type InboundChange, type TargetInbound } from './targets/target-inbound.js';
import { CLOSED_STATUSES } from './types.js';
import type { Workflow } from './workflow.js';
import { getWorkflowById } from './workflow-store.js';

export { REPLAY_WINDOW_MS } from './targets/target-inbound.js';

/**
 * Status flowing back (docs/workflows.md#status-flowing-back): a tracker's webhook, verified with
 * the workflow's secret, moves the linked case. What an event means is its kind's (`inbound` of
 * its registry entry, e.g. `targets/jira/jira-inbound.ts`); the rest is here. Refused with 401 —
 * and nothing changed — when the workflow is unknown or of another kind, the signature is
 * missing or wrong, the event is older than the replay window, or its delivery id was seen
 * before. The change is recorded with the actor `workflow:<id>`, the link's remote state is set
 * to what the target reported, and the originating workflow is left out of the deliveries the
 * change triggers: never echoed back.
 */

export interface InboundDeps {
  pool: Pool;
  pepper: string;
  clock: () => Date;
  /** Records a change's deliveries in its transaction and queues them after the commit. */
  deliveries: CaseChangeDeliveries;
}

export interface InboundRequest {
  workflowId: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
}

export type InboundResult =
  { applied: true; caseId: string; status: CaseStatus } | { applied: false; reason: string };

const refused = () =>
  new AppError('unauthenticated', 'The webhook is not signed by this workflow, or is a replay.');

/** The kinds whose trackers report status back, in the registry's order. */
export const INBOUND_KINDS: readonly WorkflowKind[] = WORKFLOW_KINDS.filter(
  (kind) => targetKind(kind).inbound,
);

/** The workflow whose secret signed the body, and its kind's inbound reader; 401 for anything else. */
async function verified(
  deps: InboundDeps,
  kind: WorkflowKind,
  req: InboundRequest,
): Promise<{ w: Workflow; inbound: TargetInbound }> {
  const inbound = targetKind(kind).inbound;
  const w = inbound ? await getWorkflowById(deps.pool, req.workflowId) : null;
  if (!inbound || !w || w.kind !== kind) throw refused();
  const secret = unsealWorkflowSecret(deps.pepper, w.id, w.secretSealed);
  if (!verifyHubSignature(secret, req.rawBody, headerValue(req.headers[inbound.signatureHeader])))
    throw refused();
  return { w, inbound };
}

function parse(raw: Buffer): Record<string, unknown> {
  try {
    const v = JSON.parse(raw.toString('utf8')) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* refused below */
  }
  throw new AppError('invalid_request', 'The webhook body is not a JSON object.');
}

/** Receives one inbound webhook of a `kind` whose registry entry has `inbound`. */
export async function receiveInbound(
  deps: InboundDeps,
  kind: WorkflowKind,
  req: InboundRequest,
): Promise<InboundResult> {
  const { w, inbound } = await verified(deps, kind, req);
  const body = parse(req.rawBody);
  const reading = inbound.read({
    headers: req.headers,
    rawBody: req.rawBody,
    body,
    now: deps.clock(),
    statusMap: w.statusMap,
  });
  if (reading.kind === 'ignored') return { applied: false, reason: reading.reason };
  if (reading.kind === 'refused') throw refused();
  if (!('change' in reading)) {
    if (!(await firstSightOfInbound(deps.pool, w.id, `${kind}:${reading.deliveryId}`))) throw refused();
    return { applied: false, reason: reading.reason };
  }
  return apply(deps, w, kind, reading.deliveryId, reading.change);
}

/**
 * Applies a tracker's change in ONE transaction (docs/workflows.md#when-deliveries-happen): the
 * delivery id seen, the link's remote state, the case's status and the other workflows'
 * deliveries commit together, so a crash leaves either all of them (queued after the commit, or
 * by the maintenance sweep) or none, and the tracker's retry of the same delivery id applies.
 */
async function apply(
  deps: InboundDeps,
  w: Workflow,
  kind: WorkflowKind,
  deliveryId: string,
  change: InboundChange,
): Promise<InboundResult> {
  // Read before the transaction: the policy is the workspace's, not part of this change.
  const maxAcceptanceDays = (await getSlaPolicy(deps.pool, w.workspaceId)).maxAcceptanceDays;
  const outcome = await withTransaction(deps.pool, async (tx) => {
    if (!(await firstSightOfInbound(tx, w.id, `${kind}:${deliveryId}`))) throw refused();
    const link = await findLinkByExternalId(tx, w.id, change.externalId);
    if (!link) return { applied: false as const, reason: 'no case is linked to this issue' };
    if (change.withinOpen && link.remote_state === 'open')
      return { applied: false as const, reason: 'the issue is still open' };
    const remoteState = CLOSED_STATUSES.has(change.status) ? 'closed' : 'open';
    // The remote state commits with the status: a delivery racing this change sees both or
    // neither, so it never moves the issue the tracker has just moved.
    await updateLink(tx, link, { remoteState });
    const changed = await changeStatusIn(tx, {
      workspaceId: w.workspaceId,
      caseId: link.case_id,
      status: change.status,
      note: change.note,
      actor: `workflow:${w.id}`,
      // A tracker's "won't fix" names no end: the longest acceptance the workspace allows.
      expiresAt: longestAcceptanceFrom(deps.clock(), maxAcceptanceDays),
    });
    if (changed === 'missing') return { applied: false as const, reason: 'the case is gone' };
    const recorded =
      changed === 'changed'
        ? await deps.deliveries.record(tx, w.workspaceId, [link.case_id], 'case.status_changed', {
            exceptWorkflowId: w.id,
          })
        : null;
    return { applied: true as const, caseId: link.case_id, recorded };
  });
  if (!outcome.applied) return outcome;
  if (outcome.recorded !== null) await deps.deliveries.queue(outcome.recorded);
  return { applied: true, caseId: outcome.caseId, status: change.status };
}
