import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (workflow credentials, single sign-on client secrets): AES-256-GCM under a key
 * derived from KEY_PEPPER with a label per purpose (so a value sealed for one purpose never opens
 * as another), bound to the owning row's id as associated data, so a sealed value copied onto
 * another row does not open. Format: `iv.tag.body`, each base64url.
 */
function key(pepper: string, purpose: string): Buffer {
  return createHmac('sha256', pepper).update(purpose).digest();
}

/** Seals `secret` for `purpose` (e.g. `workflow-seal:v1`), bound to the row `boundTo`. */
export function sealSecret(pepper: string, purpose: string, boundTo: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key(pepper, purpose), iv);
  cipher.setAAD(Buffer.from(boundTo));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url')).join('.');
}

/** Opens a value of {@link sealSecret}; throws when it is malformed or sealed otherwise. */
export function unsealSecret(pepper: string, purpose: string, boundTo: string, sealed: string): string {
  const [iv, tag, body] = sealed.split('.').map((p) => Buffer.from(p, 'base64url'));
  if (!iv || !tag || !body) throw new Error('sealed secret is malformed');
  const decipher = createDecipheriv('aes-256-gcm', key(pepper, purpose), iv);
  decipher.setAAD(Buffer.from(boundTo));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
}
