import type { CaseStatus } from '../../cases/case-status.js';

/**
 * How a tracker's webhook reports an issue's status back (docs/workflows.md#status-flowing-back),
 * as each kind with an `inbound` entry reads it. The generic part (`inbound.ts`) verifies the
 * signature, parses the body, refuses replays and stale events, and applies the change to the
 * linked case; a kind says only what its events mean.
 */

/** How old (ms) a signed event may be before it is refused as a possible replay. */
export const REPLAY_WINDOW_MS = 5 * 60_000;

/** A signed webhook, its signature verified and its body a JSON object. */
export interface InboundEvent {
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
  body: Record<string, unknown>;
  now: Date;
  /** The workflow's map from remote status to case status (`Workflow.statusMap`). */
  statusMap: Record<string, CaseStatus>;
}

/** A status change an event asks of the case linked to the issue `externalId`. */
export interface InboundChange {
  externalId: string;
  status: CaseStatus;
  /** The case history's note. */
  note: string;
  /**
   * The remote issue only moved between open statuses (Jira's To Do → In Progress): not a reopen,
   * so nothing is done while the link is known to be open.
   */
  withinOpen?: boolean;
}

/**
 * What an event is:
 * - `ignored`: answered without any replay check (GitHub's `ping`);
 * - `refused`: outside the replay window, or without the delivery id the kind needs (401);
 * - `delivery`: a delivery to remember by `deliveryId` (a repeat is refused), then either a
 *   `change` or the `reason` nothing changes.
 */
export type InboundReading =
  | { kind: 'ignored'; reason: string }
  | { kind: 'refused' }
  | { kind: 'delivery'; deliveryId: string; change: InboundChange }
  | { kind: 'delivery'; deliveryId: string; reason: string };

/** A kind's inbound webhook: how it is signed, and what its events mean. */
export interface TargetInbound {
  /** The header carrying `sha256=` + the HMAC of the raw body under the workflow's secret. */
  signatureHeader: string;
  read(event: InboundEvent): InboundReading;
}

/** A header's (first) value. */
export const headerValue = (v: string | string[] | undefined): string | undefined =>
  Array.isArray(v) ? v[0] : v;
