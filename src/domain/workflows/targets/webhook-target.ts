import { standardWebhookHeaders } from '../signing.js';
import { httpCall, type HttpCallOptions } from './http-call.js';
import { failureOf, type TargetResult } from './target-result.js';

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
