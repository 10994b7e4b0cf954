import type { Pool } from '../../db/pool.js';
import { AppError } from '../../lib/errors.js';
import { changeCaseStatus } from '../cases/case-store.js';
import { longestAcceptanceFrom } from '../cases/risk-acceptance.js';
import { getSlaPolicy } from '../cases/sla-policy-store.js';
import type { CaseStatus } from '../cases/case-status.js';
import { firstSightOfInbound } from './inbound-event-store.js';
import { findLinkByExternalId, updateLink } from './link-store.js';
import { unsealWorkflowSecret } from './sealing.js';
import { verifyHubSignature } from './signing.js';
import { targetKind, WORKFLOW_KINDS, type WorkflowKind } from './targets/registry.js';
import { headerValue, type InboundChange, type TargetInbound } from './targets/target-inbound.js';
import type { WorkflowTrigger } from './trigger.js';
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
  trigger: WorkflowTrigger;
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
  if (!(await firstSightOfInbound(deps.pool, w.id, `${kind}:${reading.deliveryId}`))) throw refused();
  if (!('change' in reading)) return { applied: false, reason: reading.reason };
  return apply(deps, w, reading.change);
}

async function apply(deps: InboundDeps, w: Workflow, change: InboundChange): Promise<InboundResult> {
  const link = await findLinkByExternalId(deps.pool, w.id, change.externalId);
  if (!link) return { applied: false, reason: 'no case is linked to this issue' };
  if (change.withinOpen && link.remote_state === 'open')
    return { applied: false, reason: 'the issue is still open' };
  const remoteState = CLOSED_STATUSES.has(change.status) ? 'closed' : 'open';
  // The remote state first: a delivery racing this change then sees nothing to transition.
  await updateLink(deps.pool, link, { remoteState });
  const changed = await changeCaseStatus(deps.pool, {
    workspaceId: w.workspaceId,
    caseId: link.case_id,
    status: change.status,
    note: change.note,
    actor: `workflow:${w.id}`,
    // A tracker's "won't fix" names no end: the longest acceptance the workspace allows.
    expiresAt: longestAcceptanceFrom(
      deps.clock(),
      (await getSlaPolicy(deps.pool, w.workspaceId)).maxAcceptanceDays,
    ),
  });
  if (!changed) return { applied: false, reason: 'the case is gone' };
  await deps.trigger.casesChanged(w.workspaceId, [link.case_id], 'case.status_changed', {
    exceptWorkflowId: w.id,
  });
  return { applied: true, caseId: link.case_id, status: change.status };
}
