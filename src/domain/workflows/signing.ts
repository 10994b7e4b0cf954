import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * Signatures of workflows, both ways (docs/workflows.md).
 *
 * Outbound: the Standard Webhooks scheme (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature: v1,<base64 HMAC-SHA-256 of "id.timestamp.body">`), keyed by the
 * workflow's `whsec_` secret; a receiver verifies with any Standard Webhooks library.
 *
 * Inbound: GitHub's `X-Hub-Signature-256: sha256=<hex HMAC-SHA-256 of the raw body>` and Jira's
 * `X-Hub-Signature` (the same scheme, as Jira Cloud's admin webhooks with a secret send it),
 * keyed by the same secret, which the user pastes into the webhook's settings there.
 */
export function newWorkflowSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function standardWebhookHeaders(
  secret: string,
  msgId: string,
  at: Date,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(msgId, at, body),
  };
}

/** `sha256=<hex>` of the raw body, as GitHub and Jira send it. */
export function hubSignature(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Constant-time check of a `sha256=<hex>` header against the body. */
export function verifyHubSignature(secret: string, body: Buffer, header: string | undefined): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(hubSignature(secret, body));
  const given = Buffer.from(header.trim());
  return given.length === expected.length && timingSafeEqual(given, expected);
}
