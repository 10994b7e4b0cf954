import type { TargetRateLimit } from '../../types.js';
import { renderSummary } from '../../template.js';
import { httpCall } from '../http-call.js';
import { urlErrors, type TargetKind } from '../target-kind.js';
import { failureOf } from '../target-result.js';
import { urlTargetSchema } from '../target-schema.js';
import { SLACK_HEADER_MAX, slackMessage } from './slack-message.js';

/** Nothing but the kind: the incoming webhook's URL is the credential, sealed at rest. */
export interface SlackTarget {
  kind: 'slack';
  rateLimit?: TargetRateLimit;
}

export interface SlackInput {
  kind: 'slack';
  /** The incoming webhook's URL (`https://hooks.slack.com/services/…`): a secret. */
  url: string;
  rateLimit?: TargetRateLimit;
}

/**
 * Slack incoming webhooks: one Block Kit message per case event (`slack-message.ts`), POSTed as
 * JSON; Slack answers `200 ok`, or a status with an error word as plain text (`400
 * invalid_payload`, `403 action_prohibited`, `404 no_service`, `410 channel_is_archived`), or
 * `429` with `Retry-After`
 * (https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks). The URL carries its
 * own authority, so it is the workflow's credential: sealed, never shown again (the view shows
 * its last four characters), replaced by `PATCH {credential}`. Default rate limit 1 message/s,
 * Slack's limit per incoming webhook (https://docs.slack.dev/apis/web-api/rate-limits).
 *
 * Exactly once: an incoming webhook can neither be asked what it received nor given an
 * idempotency key, so a message is sent at least once. It is recorded as delivered, under the
 * case's lease, as soon as Slack answers `ok`; only an answer lost on the way back (a timeout or a
 * dropped connection after Slack posted) or a crash between that answer and the record makes the
 * retry post the message a second time.
 */
export const slack: TargetKind<'slack', SlackTarget, SlackInput> = {
  kind: 'slack',
  label: 'Slack',
  requestSchema: urlTargetSchema('slack'),
  viewProperties: {},
  defaultRateLimit: { requests: 1, perSeconds: 1 },
  summaryMax: SLACK_HEADER_MAX,
  priorityAsLabel: false,
  setup: (t, ctx) => ({
    target: { kind: 'slack' },
    credential: t.url,
    errors: urlErrors(t.url, '/target/url', ctx),
  }),
  credentialProblem: (value, ctx) => urlErrors(value, '/credential', ctx)[0]?.message ?? null,
  delivery: {
    mode: 'event',
    async send(e) {
      const title = e.case ? renderSummary(e.fields, e.case, SLACK_HEADER_MAX) : '';
      const res = await httpCall(
        {
          method: 'POST',
          url: e.credential ?? '',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(slackMessage(e.delivery.event, e.case, title)),
        },
        { maxResponseBytes: 4_096, ...e.http },
      );
      const failed = failureOf(res);
      if (!failed) return { ok: true, status: res.ok ? res.status : 0 };
      // Slack's error is one plain-text word (`channel_is_archived`): the message to show.
      const word = res.ok ? res.body.trim() : '';
      return /^[a-z_]{1,60}$/.test(word)
        ? { ...failed, message: `HTTP ${res.ok ? res.status : ''}: ${word}` }
        : failed;
    },
  },
};
