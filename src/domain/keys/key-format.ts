import { crc32 } from 'node:zlib';
import { randomBytes as cryptoRandomBytes } from 'node:crypto';

/**
 * API key format of docs/api.md#keys: `svc_` + 32 random base62 characters + 6 base62
 * characters of the CRC32 of those 32 characters (GitHub-style). The checksum lets us
 * reject malformed or mistyped keys before any cache or database lookup, and lets
 * secret scanners recognise leaked keys offline.
 */
export const KEY_PREFIX = 'svc_';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
export const KEY_LENGTH = KEY_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

/** Uniform base62 characters: bytes ≥ 248 are dropped so no character is more likely. */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of cryptoRandomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

function base62Fixed(value: number, width: number): string {
  let out = '';
  let n = value;
  while (n > 0) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out.padStart(width, '0');
}

export function checksumOf(randomPart: string): string {
  return base62Fixed(crc32(randomPart) >>> 0, CHECKSUM_LENGTH);
}

/** A new secret. Shown once; only its HMAC is stored. */
export function generateApiKey(): string {
  const random = randomBase62(RANDOM_LENGTH);
  return `${KEY_PREFIX}${random}${checksumOf(random)}`;
}

/**
 * True when `candidate` has the key format and its checksum matches. Pure and cheap:
 * this runs before any lookup, so garbage never reaches the cache or the database.
 */
export function isWellFormedApiKey(candidate: string): boolean {
  if (candidate.length !== KEY_LENGTH || !KEY_PATTERN.test(candidate)) return false;
  const random = candidate.slice(KEY_PREFIX.length, KEY_PREFIX.length + RANDOM_LENGTH);
  return candidate.slice(KEY_PREFIX.length + RANDOM_LENGTH) === checksumOf(random);
}

/** `svc_AbCd****************wXyZ`: the first 8 characters, asterisks, the last 4. */
export function maskApiKey(prefix: string, lastFour: string): string {
  return `${prefix}${'*'.repeat(16)}${lastFour}`;
}

/** The parts of a key we may keep in clear to show its mask. */
export function maskParts(key: string): { prefix: string; lastFour: string } {
  return { prefix: key.slice(0, 8), lastFour: key.slice(-4) };
}
