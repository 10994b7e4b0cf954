import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Download links of finished exports: usable without the API key (CI tools, browsers), so the
 * link itself is the credential. It names the export and its expiry and carries an
 * HMAC-SHA-256 over both with a key derived from the server secret (KEY_PEPPER): changing
 * either part, or signing with another server's secret, fails the check. Invariant: a link
 * never outlives its export's `expires_at` (the signed expiry is that value).
 */
export interface SignedLink {
  expires: number;
  sig: string;
}

export function linkKey(pepper: string): Buffer {
  return createHmac('sha256', pepper).update('vuln-triage export download link v1').digest();
}

export function signLink(key: Buffer, exportId: string, expiresAt: Date): SignedLink {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  return { expires, sig: mac(key, exportId, expires) };
}

/**
 * `'valid'`, `'expired'` (signature right, time past) or `'forged'` (anything else, including a
 * malformed link): a forged link must look like an unknown export (404), an expired one says so (410).
 */
export function checkLink(
  key: Buffer,
  exportId: string,
  link: { expires?: unknown; sig?: unknown },
  now: Date,
): 'valid' | 'expired' | 'forged' {
  const expires = Number(link.expires);
  if (!Number.isSafeInteger(expires) || typeof link.sig !== 'string') return 'forged';
  const given = Buffer.from(link.sig, 'base64url');
  const want = Buffer.from(mac(key, exportId, expires), 'base64url');
  if (given.length !== want.length || !timingSafeEqual(given, want)) return 'forged';
  return now.getTime() >= expires * 1000 ? 'expired' : 'valid';
}

function mac(key: Buffer, exportId: string, expires: number): string {
  return createHmac('sha256', key).update(`${exportId}.${expires}`).digest('base64url');
}
