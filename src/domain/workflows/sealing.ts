import { sealSecret, unsealSecret } from '../../lib/secret-sealing.js';

/**
 * Target credentials and signing secrets at rest (docs/workflows.md#secrets): sealed by
 * `lib/secret-sealing.ts` under a label of their own (not the key-reveal one), bound to the
 * workflow's id, so a sealed value copied onto another workflow's row does not open.
 */
const PURPOSE = 'workflow-seal:v1';

export function sealWorkflowSecret(pepper: string, workflowId: string, secret: string): string {
  return sealSecret(pepper, PURPOSE, workflowId, secret);
}

export function unsealWorkflowSecret(pepper: string, workflowId: string, sealed: string): string {
  return unsealSecret(pepper, PURPOSE, workflowId, sealed);
}

/** What is shown instead of a credential: its last four characters. */
export function credentialHint(secret: string): string {
  return `…${secret.slice(-4)}`;
}
