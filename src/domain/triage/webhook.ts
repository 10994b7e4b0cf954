import { createHmac } from 'node:crypto';
import type { Config } from '../../lib/config.js';
import { outboundRequest } from '../../lib/outbound-request.js';
import type { ResolveHost } from '../../lib/outbound-url.js';

/**
 * Batch webhooks, signed with HMAC-SHA-256. The signing key of a batch is
 * derived from the API key that created it: `HMAC-SHA-256(key = the API key secret,
 * "webhook:" + batchId)`, hex. The receiver computes the same from its own key, so no
 * webhook secret is ever sent in a response; we keep the derived key sealed with the batch.
 * Headers: `X-Webhook-Timestamp` (unix seconds), `X-Webhook-Signature: sha256=<hex of
 * HMAC-SHA-256(signing key, timestamp + "." + body)>`.
 */
export function webhookSigningKey(apiKeySecret: string, batchId: string): string {
  return createHmac('sha256', apiKeySecret).update(`webhook:${batchId}`).digest('hex');
}

export function signWebhook(signingKey: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', signingKey).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** Options of {@link deliverWebhook}. */
export interface WebhookDeliveryOptions {
  /** @defaultValue 3 */
  attempts?: number;
  /** Budget of one attempt: resolution, connection, response and the bounded read. @defaultValue 10_000 */
  timeoutMs?: number;
  /** Wait before the retry after attempt n (from 1): `backoffMs * 2^(n-1)`. @defaultValue 250 */
  backoffMs?: number;
  /** Most response body bytes read before the connection is dropped. @defaultValue 65_536 */
  maxResponseBytes?: number;
  /** Connect to private-network addresses (setting WEBHOOK_ALLOW_PRIVATE_HOSTS). @defaultValue false */
  allowPrivateHosts?: boolean;
  /** Deliver to `http://127.0.0.1[:port]` (setting WEBHOOK_ALLOW_LOOPBACK_HTTP). @defaultValue false */
  allowLoopbackHttp?: boolean;
  /** How names are resolved. @defaultValue `dns.lookup` with `all: true` */
  resolve?: ResolveHost;
  now?: () => number;
}

/**
 * Outcome of a delivery, stored as the batch's `webhookStatus`: `delivered`; `http_<status>` (a
 * non-2xx answer, redirects included: none is followed); `timeout`; `network_error`; `dns_error`;
 * `refused_url` (the URL breaks the webhook rule, e.g. stored before the rule was tightened);
 * `refused_address` (the name resolved to an address we must not connect to).
 */
export type WebhookOutcome = string;

/**
 * POSTs the signed payload. Each attempt resolves the host again and refuses if any address is
 * outside public space (DNS rebinding), then connects to exactly the checked addresses. 5xx, 429,
 * timeouts and network or DNS errors are retried with backoff; refusals and other answers are final.
 */
export async function deliverWebhook(
  url: string,
  signingKey: string,
  payload: unknown,
  options: WebhookDeliveryOptions = {},
): Promise<WebhookOutcome> {
  const body = JSON.stringify(payload);
  const attempts = options.attempts ?? 3;
  let last: WebhookOutcome = 'not attempted';
  for (let i = 0; i < attempts; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, (options.backoffMs ?? 250) * 2 ** (i - 1)));
    const ts = Math.floor((options.now ?? Date.now)() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'vulntriage-webhook/1',
      'x-webhook-timestamp': String(ts),
      'x-webhook-signature': signWebhook(signingKey, ts, body),
    };
    const result = await outboundRequest(
      { method: 'POST', url, headers, body },
      { ...options, maxResponseBytes: options.maxResponseBytes ?? 65_536 },
    );
    // Once the status line is in, the answer stands even if the body is slow or cut.
    const status = result.ok ? result.status : 'status' in result ? result.status : undefined;
    if (status !== undefined) {
      if (status >= 200 && status < 300) return 'delivered';
      last = `http_${status}`;
      if (status < 500 && status !== 429) return last;
    } else if (!result.ok) {
      last = result.reason;
      if (result.reason === 'refused_url' || result.reason === 'refused_address') return last;
    }
  }
  return last;
}

/** Builds the deliverer a worker uses from the process's settings. */
export function makeWebhookDeliverer(
  config: Pick<Config, 'webhookAllowPrivateHosts' | 'webhookAllowLoopbackHttp'>,
): typeof deliverWebhook {
  return (url, signingKey, payload, options = {}) =>
    deliverWebhook(url, signingKey, payload, {
      allowPrivateHosts: config.webhookAllowPrivateHosts,
      allowLoopbackHttp: config.webhookAllowLoopbackHttp,
      ...options,
    });
}
