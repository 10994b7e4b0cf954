import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether `given` equals `expected`, in time that does not depend on where they differ or on
 * their lengths: both are hashed first, so `timingSafeEqual` always compares 32 bytes.
 */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Whether an `Authorization` header is `Bearer <token>` for this token. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m !== null && secretsEqual(m[1]!, token);
}

/** Whether an `Authorization` header is HTTP basic auth whose password (any user) is this token. */
export function basicPasswordMatches(header: string | undefined, token: string): boolean {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m) return false;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 && secretsEqual(decoded.slice(colon + 1), token);
}
