import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Keys are stored only as HMAC-SHA-256 under the server's `KEY_PEPPER` (docs/api.md#keys):
 * a stolen table cannot be brute-forced without the pepper.
 */
export function hashApiKey(pepper: string, key: string): string {
  return createHmac('sha256', pepper).update(key).digest('hex');
}

/** Hash of an opaque token (sessions, reveal links): never store the token itself. */
export function hashToken(pepper: string, token: string): string {
  return createHmac('sha256', pepper).update(`token:${token}`).digest('hex');
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function sealKey(pepper: string): Buffer {
  return createHmac('sha256', pepper).update('reveal-seal:v1').digest();
}

/**
 * Seals a new key for its one-time reveal (AES-256-GCM under a key derived from the
 * pepper). The sealed copy lives at most 15 minutes and is wiped at the first view.
 */
export function sealSecret(pepper: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey(pepper), iv);
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url')).join('.');
}

export function unsealSecret(pepper: string, sealed: string): string {
  const [iv, tag, body] = sealed.split('.').map((p) => Buffer.from(p, 'base64url'));
  if (!iv || !tag || !body) throw new Error('sealed secret is malformed');
  const decipher = createDecipheriv('aes-256-gcm', sealKey(pepper), iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
}
