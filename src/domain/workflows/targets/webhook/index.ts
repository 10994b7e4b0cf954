import type { TargetRateLimit } from '../../types.js';
import { JIRA_SUMMARY_MAX } from '../jira/jira-adapter.js';
import { urlErrors, type TargetKind } from '../target-kind.js';
import { urlTargetSchema } from '../target-schema.js';
import { eventPayload, sendWebhookEvent } from './webhook-event.js';

export interface WebhookTarget {
  kind: 'webhook';
  rateLimit?: TargetRateLimit;
  url: string;
}

export interface WebhookInput {
  kind: 'webhook';
  url: string;
  rateLimit?: TargetRateLimit;
}

/**
 * A generic webhook: one signed JSON event per case event (Standard Webhooks, the delivery id
 * as `webhook-id` so a receiver drops a retry it already took). Default rate limit 20
 * requests/s: an unknown receiver; raise it per workflow.
 */
export const webhook: TargetKind<'webhook', WebhookTarget, WebhookInput> = {
  kind: 'webhook',
  label: 'webhook',
  requestSchema: urlTargetSchema('webhook'),
  viewProperties: { url: { type: 'string' } },
  defaultRateLimit: { requests: 20, perSeconds: 1 },
  // The summary template is checked as for Jira, though a webhook event carries no summary.
  summaryMax: JIRA_SUMMARY_MAX,
  priorityAsLabel: false,
  setup: (t, ctx) => ({
    target: { kind: 'webhook', url: t.url },
    credential: null,
    errors: urlErrors(t.url, '/target/url', ctx),
  }),
  delivery: {
    mode: 'event',
    send: (e) =>
      sendWebhookEvent(
        e.target.url,
        e.secret,
        e.delivery.id,
        eventPayload(e.delivery, e.case, e.now),
        e.now,
        e.http,
      ),
  },
};
