import { createHash } from 'node:crypto';
import { headerValue, REPLAY_WINDOW_MS, type TargetInbound } from '../target-inbound.js';

/**
 * Jira's `jira:issue_updated` events: the issue's status name through the workflow's status map,
 * else its status category (`done` → resolved; back out of done → open). Jira's `timestamp` (ms)
 * must be within the replay window; its delivery identifier (else the body's hash) is remembered.
 */
export const jiraInbound: TargetInbound = {
  signatureHeader: 'x-hub-signature',
  read({ headers, rawBody, body, now, statusMap }) {
    const ts = typeof body.timestamp === 'number' ? body.timestamp : NaN;
    if (Number.isNaN(ts) || Math.abs(now.getTime() - ts) > REPLAY_WINDOW_MS) return { kind: 'refused' };
    // Without Jira's delivery identifier, a replay is the same signed body sent again.
    const deliveryId =
      headerValue(headers['x-atlassian-webhook-identifier']) ??
      `sha256:${createHash('sha256').update(rawBody).digest('hex')}`;
    const issue = body.issue as
      | { key?: unknown; fields?: { status?: { name?: unknown; statusCategory?: { key?: unknown } } } }
      | undefined;
    if (typeof issue?.key !== 'string') return { kind: 'delivery', deliveryId, reason: 'not an issue event' };
    const status = issue.fields?.status;
    const name = typeof status?.name === 'string' ? status.name : '';
    const category = typeof status?.statusCategory?.key === 'string' ? status.statusCategory.key : '';
    const mapped = statusMap[name] ?? statusMap[`category:${category}`];
    return {
      kind: 'delivery',
      deliveryId,
      change: {
        externalId: issue.key,
        status: mapped ?? (category === 'done' ? 'resolved' : 'open'),
        note: `Jira issue ${issue.key} moved to ${name || category}.`,
        withinOpen: !mapped && category !== 'done',
      },
    };
  },
};
