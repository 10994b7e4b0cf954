import { createHash } from 'node:crypto';
import type { Pool } from '../../db/pool.js';
import { AppError } from '../../lib/errors.js';
import { changeCaseStatus } from '../cases/case-store.js';
import type { CaseStatus } from '../cases/case-status.js';
import { unsealWorkflowSecret } from './sealing.js';
import { verifyHubSignature } from './signing.js';
import type { WorkflowTrigger } from './trigger.js';
import { targetKind } from './targets/registry.js';
import { CLOSED_STATUSES } from './types.js';
import type { Workflow } from './workflow.js';
import { firstSightOfInbound } from './inbound-event-store.js';
import { findLinkByExternalId, updateLink } from './link-store.js';
import { getWorkflowById } from './workflow-store.js';

/**
 * Status flowing back (docs/workflows.md#status-flowing-back): Jira and GitHub webhooks, verified with the workflow's
 * secret, move the linked case. Refused with 401 — and nothing changed — when the workflow is
 * unknown or of the other kind, the signature is missing or wrong, the event is older than
 * {@link REPLAY_WINDOW_MS}, or its delivery id was seen before. The change is recorded with the
 * actor `workflow:<id>`, the link's remote state is set to what the target reported, and the
 * originating workflow is left out of the deliveries the change triggers: never echoed back.
 */
export const REPLAY_WINDOW_MS = 5 * 60_000;

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

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** The workflow whose secret signed the body; 401 for anything else. */
async function verified(deps: InboundDeps, kind: 'jira' | 'github', req: InboundRequest): Promise<Workflow> {
  const w = await getWorkflowById(deps.pool, req.workflowId);
  if (!w || w.kind !== kind) throw refused();
  const secret = unsealWorkflowSecret(deps.pepper, w.id, w.secretSealed);
  const header = one(req.headers[targetKind(kind).inbound?.signatureHeader ?? 'x-hub-signature-256']);
  if (!verifyHubSignature(secret, req.rawBody, header)) throw refused();
  return w;
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

async function apply(
  deps: InboundDeps,
  w: Workflow,
  externalId: string,
  mapped: CaseStatus | null,
  note: string,
): Promise<InboundResult> {
  const link = await findLinkByExternalId(deps.pool, w.id, externalId);
  if (!link) return { applied: false, reason: 'no case is linked to this issue' };
  if (!mapped) return { applied: false, reason: 'the status is not mapped' };
  const remoteState = CLOSED_STATUSES.has(mapped) ? 'closed' : 'open';
  // The remote state first: a delivery racing this change then sees nothing to transition.
  await updateLink(deps.pool, link, { remoteState });
  const changed = await changeCaseStatus(deps.pool, {
    workspaceId: w.workspaceId,
    caseId: link.case_id,
    status: mapped,
    note,
    actor: `workflow:${w.id}`,
  });
  if (!changed) return { applied: false, reason: 'the case is gone' };
  await deps.trigger.casesChanged(w.workspaceId, [link.case_id], 'case.status_changed', {
    exceptWorkflowId: w.id,
  });
  return { applied: true, caseId: link.case_id, status: mapped };
}

/**
 * `issues` events: `closed` (state_reason `completed` → resolved, `not_planned` →
 * risk_accepted) and `reopened` (→ open), or what the workflow's status map says for
 * `closed`, `closed:<reason>` or `reopened`. GitHub signs no timestamp: the delivery id
 * (`X-GitHub-Delivery`) is remembered, and the issue's `updated_at` must be recent.
 */
export async function receiveGithub(deps: InboundDeps, req: InboundRequest): Promise<InboundResult> {
  const w = await verified(deps, 'github', req);
  const body = parse(req.rawBody);
  const event = one(req.headers['x-github-event']);
  if (event === 'ping') return { applied: false, reason: 'ping' };
  const issue = body.issue as { number?: unknown; updated_at?: unknown; state_reason?: unknown } | undefined;
  const updatedAt = typeof issue?.updated_at === 'string' ? Date.parse(issue.updated_at) : NaN;
  if (Number.isNaN(updatedAt) || deps.clock().getTime() - updatedAt > REPLAY_WINDOW_MS) throw refused();
  const deliveryId = one(req.headers['x-github-delivery']);
  if (!deliveryId || !(await firstSightOfInbound(deps.pool, w.id, `github:${deliveryId}`))) throw refused();
  if (event !== 'issues' || typeof issue?.number !== 'number')
    return { applied: false, reason: 'not an issue event' };
  const action = body.action;
  let mapped: CaseStatus | null = null;
  if (action === 'closed') {
    const reason = issue.state_reason === 'not_planned' ? 'not_planned' : 'completed';
    mapped =
      w.statusMap[`closed:${reason}`] ??
      w.statusMap.closed ??
      (reason === 'not_planned' ? 'risk_accepted' : 'resolved');
  } else if (action === 'reopened') {
    mapped = w.statusMap.reopened ?? 'open';
  } else return { applied: false, reason: `action ${String(action)} is not mapped` };
  return apply(deps, w, String(issue.number), mapped, `GitHub issue #${issue.number} ${String(action)}.`);
}

/**
 * `jira:issue_updated` events: the issue's status name through the workflow's status map, else
 * its status category (`done` → resolved; back out of done → open). Jira's `timestamp` (ms)
 * must be within the replay window; its delivery identifier (else the body's hash) is remembered.
 */
export async function receiveJira(deps: InboundDeps, req: InboundRequest): Promise<InboundResult> {
  const w = await verified(deps, 'jira', req);
  const body = parse(req.rawBody);
  const ts = typeof body.timestamp === 'number' ? body.timestamp : NaN;
  if (Number.isNaN(ts) || Math.abs(deps.clock().getTime() - ts) > REPLAY_WINDOW_MS) throw refused();
  const issue = body.issue as
    | { key?: unknown; fields?: { status?: { name?: unknown; statusCategory?: { key?: unknown } } } }
    | undefined;
  // Without Jira's delivery identifier, a replay is the same signed body sent again.
  const deliveryId =
    one(req.headers['x-atlassian-webhook-identifier']) ??
    `sha256:${createHash('sha256').update(req.rawBody).digest('hex')}`;
  if (!(await firstSightOfInbound(deps.pool, w.id, `jira:${deliveryId}`))) throw refused();
  if (typeof issue?.key !== 'string') return { applied: false, reason: 'not an issue event' };
  const status = issue.fields?.status;
  const name = typeof status?.name === 'string' ? status.name : '';
  const category = typeof status?.statusCategory?.key === 'string' ? status.statusCategory.key : '';
  const mapped: CaseStatus =
    w.statusMap[name] ?? w.statusMap[`category:${category}`] ?? (category === 'done' ? 'resolved' : 'open');
  // Moving between open statuses (To Do → In Progress) is not a reopen of an open case.
  const link = await findLinkByExternalId(deps.pool, w.id, issue.key);
  if (
    link &&
    !w.statusMap[name] &&
    !w.statusMap[`category:${category}`] &&
    category !== 'done' &&
    link.remote_state === 'open'
  )
    return { applied: false, reason: 'the issue is still open' };
  return apply(deps, w, issue.key, mapped, `Jira issue ${issue.key} moved to ${name || category}.`);
}
