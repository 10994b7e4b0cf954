import type { Pool } from '../../db/pool.js';
import type { HttpCallOptions } from './targets/http-call.js';
import type { IssueAdapter } from './targets/issue-adapter.js';
import { targetKind } from './targets/registry.js';
import type { TargetFailure } from './targets/target-result.js';
import { unsealWorkflowSecret } from './sealing.js';
import { rateLimitOf, workflowGate, type Pacer } from './rate-limit.js';
import { CLOSED_STATUSES, type DeliveryCase } from './types.js';
import type { Workflow } from './workflow.js';
import { loadDeliveryCase } from './delivery-case-store.js';
import {
  getDelivery,
  pendingHeadBefore,
  recordAttempt,
  setNextAttempt,
  type DeliveryRow,
} from './delivery-store.js';
import { countCreateAttempt, ensureLink, updateLink } from './link-store.js';
import { getWorkflowById } from './workflow-store.js';
import { withCaseLease, type CaseLease, type CaseLeaseOptions } from './case-lease.js';
import { randomUUID } from 'node:crypto';

/** What a delivery needs: the database, the pepper that opens sealed secrets, outbound rules. */
export interface DeliveryDeps {
  pool: Pool;
  pepper: string;
  clock: () => Date;
  /** The public base URL of this service (the link back from an issue). */
  baseUrl: string;
  http: HttpCallOptions;
  /**
   * Where the workflows' rate-limit schedules live (Redis for every process, else this one);
   * absent: no proactive limit, only the target's own 429s.
   */
  pacer?: Pacer;
  /**
   * Longest a call waits in process for its rate-limit slot; a later slot delays the job instead.
   * @defaultValue {@link RATE_WAIT_MS}
   */
  rateWaitMs?: number;
  /** The per-case lease's timings (`case-lease.ts`); tests shorten them. */
  lease?: CaseLeaseOptions;
  /**
   * Test hook: runs after a remote issue was created and before it is stored locally. A test
   * throws here to stand for a worker killed at exactly that moment.
   */
  afterRemoteCreate?: () => Promise<void>;
}

/**
 * The outcome of one attempt: `delivered`; `retry` (the job fails and is retried, after the
 * target's `Retry-After` when it gave one); `failed` (final: a 4xx that retrying cannot fix).
 * `ids` are the deliveries whose outcome is left to record. `busy`: another attempt holds the
 * case's lease (or this one lost it); `queued`: an earlier event of the case is still pending
 * (the case's head). In both nothing was sent and the job waits `retryAfterMs` without spending
 * an attempt.
 */
export type AttemptOutcome =
  | { kind: 'delivered'; ids: string[]; status: number | null }
  | { kind: 'busy'; ids: string[]; retryAfterMs: number }
  | { kind: 'queued'; ids: string[]; retryAfterMs: number }
  | { kind: 'retry'; ids: string[]; failure: TargetFailure }
  | { kind: 'failed'; ids: string[]; failure: TargetFailure }
  | { kind: 'skipped'; ids: string[]; reason: string };

/** The default of {@link DeliveryDeps.rateWaitMs}. */
export const RATE_WAIT_MS = 1_000;

/**
 * How a delivery queued behind its case's head comes back: just after the head's next attempt
 * (soon, when the head has none scheduled: it is new or being tried), and at least this often,
 * so a head whose job was lost and queued again by maintenance does not leave it waiting long.
 */
export const QUEUED_RECHECK_MS = { min: 500, margin: 500, max: 60_000 } as const;

/** When a delivery queued behind a head whose next attempt is `headNext` looks again. */
export function queuedWaitMs(headNext: Date | null, now: Date): number {
  const untilHead = headNext ? headNext.getTime() - now.getTime() + QUEUED_RECHECK_MS.margin : 0;
  return Math.min(QUEUED_RECHECK_MS.max, Math.max(QUEUED_RECHECK_MS.min, untilHead));
}

/** The outbound call settings of one workflow: the operator's URL rules and its rate limit. */
export function httpOf(
  w: Workflow,
  deps: Pick<DeliveryDeps, 'http' | 'pacer' | 'rateWaitMs'>,
): HttpCallOptions {
  if (!deps.pacer) return deps.http;
  return {
    ...deps.http,
    gate: workflowGate(deps.pacer, w.id, rateLimitOf(w.target), deps.rateWaitMs ?? RATE_WAIT_MS),
  };
}

/** The issue adapter of an issue workflow, its credential opened in memory for this attempt. */
export function issueAdapterOf(
  w: Workflow,
  deps: Pick<DeliveryDeps, 'pepper' | 'http' | 'pacer' | 'rateWaitMs'>,
): IssueAdapter | null {
  const { delivery } = targetKind(w.kind);
  if (delivery.mode !== 'issue' || !w.credentialSealed) return null;
  const credential = unsealWorkflowSecret(deps.pepper, w.id, w.credentialSealed);
  return delivery.adapter(w.target, credential, w.fields, httpOf(w, deps));
}

const failure = (message: string): TargetFailure => ({ ok: false, retryable: false, status: null, message });

/**
 * One attempt at a delivery. Issue targets are state-based: whatever the event, the attempt
 * brings the case's one issue up to date (creating it if needed, transitioning it when the
 * case closed or reopened), holding the lease on (workflow, case) (`case-lease.ts`), so two
 * attempts for one case — a trigger that fired twice — never both create, and one case's
 * deliveries never overtake each other. No pooled connection is held across a remote call: the
 * lease is a committed row, renewed before each call. Idempotency across crashes: the link row
 * and its marker are stored before the first create; an attempt that finds a link without an
 * external id but with a create counted searches the target for the marker first.
 */
export async function attemptDelivery(deps: DeliveryDeps, deliveryId: string): Promise<AttemptOutcome> {
  const d = await getDelivery(deps.pool, deliveryId);
  if (!d || d.status !== 'pending') return { kind: 'skipped', ids: [], reason: 'not pending' };
  const w = await getWorkflowById(deps.pool, d.workflow_id);
  if (!w) return { kind: 'skipped', ids: [], reason: 'workflow deleted' };
  if (!w.enabled && d.event !== 'workflow.test')
    return { kind: 'failed', ids: [d.id], failure: failure('The workflow is disabled.') };
  if (d.event === 'workflow.test') return testDelivery(deps, w, d);
  if (!d.case_id) return { kind: 'skipped', ids: [d.id], reason: 'no case' };
  const caseId = d.case_id;
  const leased = await withCaseLease(
    deps.pool,
    w.id,
    caseId,
    async (lease): Promise<AttemptOutcome> => {
      // Read under the lease: an attempt that held it before may have delivered this one.
      const now = await getDelivery(deps.pool, d.id);
      if (!now || now.status !== 'pending') return { kind: 'skipped', ids: [], reason: 'not pending' };
      // One case's events go in order, and only the head's own job tries it: a later event
      // waits, unsent and spending no attempt, until the head is delivered or given up (each job
      // sending the head would multiply its attempts by the case's pending events).
      const head = await pendingHeadBefore(deps.pool, now);
      if (head)
        return { kind: 'queued', ids: [], retryAfterMs: queuedWaitMs(head.next_attempt_at, deps.clock()) };
      const c = await loadDeliveryCase(deps.pool, caseId, deps.baseUrl);
      if (!c) return { kind: 'skipped', ids: [d.id], reason: 'case deleted' };
      const attempt: LeasedAttempt = { deps, lease, w, d: now, c };
      return targetKind(w.kind).delivery.mode === 'event' ? eventDelivery(attempt) : issueDelivery(attempt);
    },
    deps.lease,
  );
  return leased.held ? leased.value : { kind: 'busy', ids: [], retryAfterMs: leased.retryAfterMs };
}

/** The answer of an attempt whose lease was taken over (it ran out): make no further call. */
const LEASE_LOST: AttemptOutcome = { kind: 'busy', ids: [], retryAfterMs: 1_000 };

/** A target's failure as the outcome of the attempt at `ids`: retried when it may pass later. */
const failedWith = (ids: string[], f: TargetFailure): AttemptOutcome => ({
  kind: f.retryable ? 'retry' : 'failed',
  ids,
  failure: f,
});

/** One attempt at delivery `d` of case `c`, under the case's lease. */
interface LeasedAttempt {
  deps: DeliveryDeps;
  lease: CaseLease;
  w: Workflow;
  d: DeliveryRow;
  c: DeliveryCase;
}

/**
 * An `event` target (a webhook, Slack): the case's pending events up to this one, oldest first,
 * one message each, each recorded as delivered as soon as the target took it.
 */
async function eventDelivery({ deps, lease, w, d, c }: LeasedAttempt): Promise<AttemptOutcome> {
  const send = eventSender(deps, w);
  if (!send) return { kind: 'failed', ids: [d.id], failure: failure('not an event target') };
  if (!(await lease.keep())) return LEASE_LOST;
  const res = await send(d, c);
  if (!res.ok) return failedWith([d.id], res);
  // Recorded while the case's lease is held, so the case's next event, waiting for the lease,
  // finds its head delivered and goes at once.
  await recordDelivered(deps.pool, [d.id], w.id, res.status);
  // Already recorded (above): nothing left for `recordAttemptOutcome`.
  return { kind: 'delivered', ids: [], status: 200 };
}

/** Sends one delivery of an `event` target (secret and credential opened for this attempt). */
function eventSender(deps: DeliveryDeps, w: Workflow) {
  const { delivery } = targetKind(w.kind);
  if (delivery.mode !== 'event') return null;
  const secret = unsealWorkflowSecret(deps.pepper, w.id, w.secretSealed);
  const credential = w.credentialSealed ? unsealWorkflowSecret(deps.pepper, w.id, w.credentialSealed) : null;
  const http = httpOf(w, deps);
  return (p: DeliveryRow, c: DeliveryCase | null) =>
    delivery.send({
      target: w.target,
      credential,
      secret,
      delivery: { id: p.id, event: p.event, workflowId: p.workflow_id },
      case: c,
      fields: w.fields,
      now: deps.clock(),
      http,
    });
}

async function issueDelivery({ deps, lease, w, d, c }: LeasedAttempt): Promise<AttemptOutcome> {
  const adapter = issueAdapterOf(w, deps);
  if (!adapter) return { kind: 'failed', ids: [d.id], failure: failure('The workflow has no credential.') };
  const db = deps.pool;
  const ids = [d.id];
  const link = await ensureLink(db, w, c.id, `vt-${randomUUID()}`);
  let externalId = link.external_id;
  let created = false;
  if (!externalId && link.create_attempts > 0) {
    if (!(await lease.keep())) return LEASE_LOST;
    const found = await adapter.find(link.marker);
    if (!found.ok) return failedWith(ids, found);
    if (found.issue) {
      externalId = found.issue.externalId;
      await updateLink(db, link, { externalId, url: found.issue.url });
    }
  }
  if (!externalId) {
    if (!(await lease.keep())) return LEASE_LOST;
    await countCreateAttempt(db, link);
    const made = await adapter.create(c, link.marker);
    // Held back by the rate limit, the create was never sent: nothing for a retry to search for.
    if (!made.ok && made.throttled) await countCreateAttempt(db, link, -1);
    if (!made.ok) return failedWith(ids, made);
    await deps.afterRemoteCreate?.();
    externalId = made.issue.externalId;
    created = true;
    await updateLink(db, link, { externalId, url: made.issue.url, remoteState: 'open' });
  } else if (!created) {
    if (!(await lease.keep())) return LEASE_LOST;
    const updated = await adapter.update(c, externalId, link.marker);
    if (!updated.ok) return failedWith(ids, updated);
  }
  const wanted = CLOSED_STATUSES.has(c.status) ? 'closed' : 'open';
  const current = created ? 'open' : link.remote_state;
  if (wanted !== current) {
    if (!(await lease.keep())) return LEASE_LOST;
    const moved = await adapter.setState(c, externalId, wanted);
    if (!moved.ok) return failedWith(ids, moved);
    await updateLink(db, link, { remoteState: wanted });
  }
  await updateLink(db, link, { delivered: true });
  return { kind: 'delivered', ids, status: 200 };
}

/** `POST /workflows/:id/test`: one sample delivery, answered with what the target said. */
async function testDelivery(deps: DeliveryDeps, w: Workflow, d: DeliveryRow): Promise<AttemptOutcome> {
  const send = eventSender(deps, w);
  if (send) {
    const res = await send(d, null);
    return res.ok
      ? { kind: 'delivered', ids: [d.id], status: res.status }
      : { kind: 'failed', ids: [d.id], failure: res };
  }
  // An issue target is checked without creating anything: the marker search proves the
  // address, the credential and the project or repository.
  const adapter = issueAdapterOf(w, deps);
  if (!adapter) return { kind: 'failed', ids: [d.id], failure: failure('The workflow has no credential.') };
  const res = await adapter.find(`vt-test-${d.id}`);
  return res.ok
    ? { kind: 'delivered', ids: [d.id], status: res.status }
    : { kind: 'failed', ids: [d.id], failure: res };
}

/**
 * Stores an attempt's outcome on its deliveries and the workflow. `nextAttemptAt` is set while
 * a retry is pending, so a target down for hours shows deliveries pending with their next try.
 */
export async function recordAttemptOutcome(
  pool: Pool,
  workflowId: string,
  out: Exclude<AttemptOutcome, { kind: 'skipped' | 'busy' | 'queued' }>,
  nextAttemptAt: Date | null,
): Promise<void> {
  if (out.ids.length === 0) return;
  if (out.kind === 'delivered') return recordDelivered(pool, out.ids, workflowId, out.status);
  await recordAttempt(pool, out.ids, {
    workflowId,
    status: out.kind === 'retry' && nextAttemptAt ? 'pending' : 'failed',
    responseCode: out.failure.status,
    error: out.failure.message,
    nextAttemptAt,
  });
}

/** Records the deliveries `ids` as delivered, with the target's status code. */
function recordDelivered(pool: Pool, ids: string[], workflowId: string, responseCode: number | null) {
  return recordAttempt(pool, ids, {
    workflowId,
    status: 'delivered',
    responseCode,
    error: null,
    nextAttemptAt: null,
  });
}

/**
 * An attempt the workflow's rate limit held back: the deliveries stay pending, their attempts
 * unchanged, showing when they go next.
 */
export async function recordThrottled(pool: Pool, ids: string[], nextAttemptAt: Date): Promise<void> {
  if (ids.length > 0) await setNextAttempt(pool, ids, nextAttemptAt);
}
