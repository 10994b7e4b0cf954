import { createHmac } from 'node:crypto';

/**
 * Batch webhooks (DECISIONS §7), signed with HMAC-SHA-256. The signing key of a batch is
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

/** Delivers once per attempt with a 10 s timeout; retries 3 times with backoff. Returns the outcome. */
export async function deliverWebhook(
  url: string,
  signingKey: string,
  payload: unknown,
  options: { attempts?: number; now?: () => number; fetchImpl?: typeof fetch } = {},
): Promise<string> {
  const body = JSON.stringify(payload);
  const attempts = options.attempts ?? 3;
  let last = 'not attempted';
  for (let i = 0; i < attempts; i++) {
    const ts = Math.floor((options.now ?? Date.now)() / 1000);
    try {
      const res = await (options.fetchImpl ?? fetch)(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'vulntriage-webhook/1',
          'x-webhook-timestamp': String(ts),
          'x-webhook-signature': signWebhook(signingKey, ts, body),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(10_000),
      });
      last = `http_${res.status}`;
      await res.body?.cancel().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return 'delivered';
      if (res.status < 500 && res.status !== 429) return last;
    } catch (err) {
      last = (err as Error).name === 'TimeoutError' ? 'timeout' : 'network_error';
    }
    await new Promise((r) => setTimeout(r, 250 * 2 ** i));
  }
  return last;
}
