import type { FieldError } from '../../../lib/errors.js';
import { outboundUrlProblem, type OutboundUrlOptions } from '../../../lib/outbound-url.js';
import type { DeliveryCase, TargetRateLimit, WorkflowEvent, WorkflowFields } from '../types.js';
import type { HttpCallOptions } from './http-call.js';
import type { IssueAdapter } from './issue-adapter.js';
import type { TargetInbound } from './target-inbound.js';
import type { TargetResult } from './target-result.js';

/**
 * What one kind of workflow target is: everything the rest of the workflows area needs of it,
 * so a new target is one folder and one line of `registry.ts` (the shape of Trivy's analyzers).
 *
 * Glossary:
 * - **config**: the target as stored on the workflow (`T`), never holding the credential;
 * - **input**: the target as a create request gives it (`I`), the credential in clear;
 * - **credential**: what is sealed at rest and never shown again (an API token, a Slack webhook URL).
 */
export interface TargetKind<K extends string, T extends { kind: K }, I extends { kind: K }> {
  kind: K;
  /** How docs and messages name it ("Jira", "GitHub", "webhook", "Slack"). */
  label: string;
  /** JSON schema of the create request's `target` for this kind, `kind` included, `rateLimit` not. */
  requestSchema: object;
  /** The config's properties a workflow view shows (beside `kind`, `credential`, `rateLimit`). */
  viewProperties: Record<string, object>;
  /** The proactive rate limit when the workflow sets none (`rate-limit.ts`). */
  defaultRateLimit: TargetRateLimit;
  /** Longest summary the field mapping may render for this kind. */
  summaryMax: number;
  /** The mapped priority travels as a label (GitHub) rather than a field of its own. */
  priorityAsLabel: boolean;
  /** Checks the input (URL rules and the like) and splits it into config and credential. */
  setup(input: I, ctx: TargetContext): TargetSetup<T>;
  /**
   * Why a replacement credential (`PATCH … {credential}`) is refused, or null; absent: the kind
   * has no credential to replace.
   */
  credentialProblem?: (value: string, ctx: TargetContext) => string | null;
  delivery: TargetDelivery<T>;
  /**
   * Present for a kind whose tracker reports status back (`/api/hooks/<kind>/:workflowId`): how
   * its webhook is signed and what its events mean.
   */
  inbound?: TargetInbound;
}

export interface TargetContext {
  /** The outbound URL rule's settings (WEBHOOK_ALLOW_PRIVATE_HOSTS, WEBHOOK_ALLOW_LOOPBACK_HTTP). */
  outbound: OutboundUrlOptions;
}

export interface TargetSetup<T> {
  target: T;
  credential: string | null;
  errors: FieldError[];
}

/**
 * How deliveries reach the target:
 * - `issue`: state-based: one external issue per case, brought up to date by each delivery
 *   (created, updated, closed or reopened), found again by its marker after a crash;
 * - `event`: one message per case event, sent in order (a case's earlier pending events first).
 */
export type TargetDelivery<T> =
  | {
      mode: 'issue';
      adapter(target: T, credential: string, fields: WorkflowFields, http: HttpCallOptions): IssueAdapter;
    }
  | { mode: 'event'; send(message: OutboundEvent<T>): Promise<TargetResult<object>> };

/** One event as an `event` target sends it. */
export interface OutboundEvent<T> {
  target: T;
  /** The opened credential, null for a kind without one. */
  credential: string | null;
  /** The workflow's `whsec_` signing secret, opened. */
  secret: string;
  /** The delivery: its id is the same on every retry (an idempotency key where the target takes one). */
  delivery: { id: string; event: WorkflowEvent; workflowId: string };
  /** The case, or null for `workflow.test`. */
  case: DeliveryCase | null;
  fields: WorkflowFields;
  now: Date;
  http: HttpCallOptions;
}

/** The URL rule's field error at `path` when `value` breaks it (a kind's `setup` helper). */
export function urlErrors(value: string, path: string, ctx: TargetContext): FieldError[] {
  const problem = outboundUrlProblem(value, ctx.outbound);
  return problem ? [{ path, message: problem }] : [];
}
