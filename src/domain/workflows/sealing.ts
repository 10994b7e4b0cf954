import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Target credentials and signing secrets at rest (docs/workflows.md#secrets): AES-256-GCM under a key derived
 * from KEY_PEPPER with a label of its own (not the key-reveal one), bound to the workflow's id
 * as associated data, so a sealed value copied onto another workflow's row does not open.
 */
function key(pepper: string): Buffer {
  return createHmac('sha256', pepper).update('workflow-seal:v1').digest();
}

export function sealWorkflowSecret(pepper: string, workflowId: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key(pepper), iv);
  cipher.setAAD(Buffer.from(workflowId));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url')).join('.');
}

export function unsealWorkflowSecret(pepper: string, workflowId: string, sealed: string): string {
  const [iv, tag, body] = sealed.split('.').map((p) => Buffer.from(p, 'base64url'));
  if (!iv || !tag || !body) throw new Error('sealed workflow secret is malformed');
  const decipher = createDecipheriv('aes-256-gcm', key(pepper), iv);
  decipher.setAAD(Buffer.from(workflowId));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
}

/** What is shown instead of a credential: its last four characters. */
export function credentialHint(secret: string): string {
  return `…${secret.slice(-4)}`;
}
