import type { CaseStatus } from '../../../cases/case-status.js';
import { headerValue, REPLAY_WINDOW_MS, type TargetInbound } from '../target-inbound.js';

/**
 * GitHub's `issues` events: `closed` (state_reason `completed` → resolved, `not_planned` →
 * risk_accepted) and `reopened` (→ open), or what the workflow's status map says for `closed`,
 * `closed:<reason>` or `reopened`. GitHub signs no timestamp: the delivery id
 * (`X-GitHub-Delivery`) is remembered, and the issue's `updated_at` must be recent.
 */
export const githubInbound: TargetInbound = {
  signatureHeader: 'x-hub-signature-256',
  read({ headers, body, now, statusMap }) {
    const event = headerValue(headers['x-github-event']);
    if (event === 'ping') return { kind: 'ignored', reason: 'ping' };
    const issue = body.issue as
      { number?: unknown; updated_at?: unknown; state_reason?: unknown } | undefined;
    const updatedAt = typeof issue?.updated_at === 'string' ? Date.parse(issue.updated_at) : NaN;
    if (Number.isNaN(updatedAt) || now.getTime() - updatedAt > REPLAY_WINDOW_MS) return { kind: 'refused' };
    const deliveryId = headerValue(headers['x-github-delivery']);
    if (!deliveryId) return { kind: 'refused' };
    if (event !== 'issues' || typeof issue?.number !== 'number')
      return { kind: 'delivery', deliveryId, reason: 'not an issue event' };
    const action = body.action;
    let status: CaseStatus;
    if (action === 'closed') {
      const reason = issue.state_reason === 'not_planned' ? 'not_planned' : 'completed';
      status =
        statusMap[`closed:${reason}`] ??
        statusMap.closed ??
        (reason === 'not_planned' ? 'risk_accepted' : 'resolved');
    } else if (action === 'reopened') {
      status = statusMap.reopened ?? 'open';
    } else return { kind: 'delivery', deliveryId, reason: `action ${String(action)} is not mapped` };
    const note = `GitHub issue #${issue.number} ${String(action)}.`;
    return { kind: 'delivery', deliveryId, change: { externalId: String(issue.number), status, note } };
  },
};
