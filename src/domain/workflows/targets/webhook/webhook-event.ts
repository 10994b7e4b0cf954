import type { DeliveryCase, WorkflowEvent } from '../../types.js';
import { standardWebhookHeaders } from '../../signing.js';
import { httpCall, type HttpCallOptions } from '../http-call.js';
import { failureOf, type TargetResult } from '../target-result.js';

/**
 * POSTs one event to a generic webhook, signed per Standard Webhooks. `msgId` is the delivery
 * id, the same on every retry, so a receiver drops a retried event it already took.
 */
export async function sendWebhookEvent(
  url: string,
  secret: string,
  msgId: string,
  payload: unknown,
  now: Date,
  http: HttpCallOptions,
): Promise<TargetResult<object>> {
  const body = JSON.stringify(payload);
  const res = await httpCall(
    {
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', ...standardWebhookHeaders(secret, msgId, now, body) },
      body,
    },
    { maxResponseBytes: 65_536, ...http },
  );
  return failureOf(res) ?? { ok: true, status: res.ok ? res.status : 0 };
}

/** The generic webhook's JSON event; `c` is null for `workflow.test`. */
export function eventPayload(
  d: { id: string; event: WorkflowEvent; workflowId: string },
  c: DeliveryCase | null,
  at: Date,
) {
  return {
    type: d.event,
    id: d.id,
    timestamp: at.toISOString(),
    workflowId: d.workflowId,
    data: c && {
      object: 'case',
      id: c.id,
      title: c.title,
      severity: c.severity,
      priority: c.priority,
      recommendedAction: c.recommendedAction,
      reasoning: c.reasoning,
      status: c.status,
      scanner: c.scanner,
      ruleId: c.ruleId,
      cveIds: c.cveIds,
      cvssScore: c.cvssScore,
      epss: c.epss,
      kev: c.kev,
      asset: c.asset,
      environment: c.environment,
      firstSeen: c.firstSeen.toISOString(),
      lastSeen: c.lastSeen.toISOString(),
      dueAt: c.dueAt?.toISOString() ?? null,
      url: c.url,
    },
  };
}
