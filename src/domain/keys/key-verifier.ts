import type { Queryable } from '../../db/pool.js';
import { isWellFormedApiKey } from './key-format.js';
import { hashApiKey } from './key-secrets.js';
import { authenticates, effectiveKeyState } from './key-lifecycle.js';
import type { Invalidation } from './invalidation-bus.js';
import type { AuthFailureLimiter } from './auth-failure-limiter.js';
import { findKeyByHash, type AuthenticatedKey } from './keys-store.js';

export type { AuthenticatedKey } from './keys-store.js';

export type VerifyResult =
  | { ok: true; key: AuthenticatedKey }
  | { ok: false; code: 'invalid_api_key' | 'key_expired' | 'key_revoked' }
  /** This client is past its failed authentications and its paced lookups: refused without one. */
  | { ok: false; code: 'rate_limited'; retryAfterMs: number };

export interface KeyVerifier {
  /** `client`: the caller's address, for the failed-authentication limit (docs/operations.md#failure-behaviour). */
  verify(secret: string, client?: string): Promise<VerifyResult>;
  invalidate(message: Invalidation): void;
}

/** The share of `versionCheckMs` after which a request reads the counter ahead. */
const READ_AHEAD_AT = 0.75;

interface Entry {
  key: AuthenticatedKey;
  until: number;
}

/**
 * Verifies `X-API-Key` secrets. Order matters: the checksum is checked first (no lookup
 * for garbage), then the process cache (good keys only, `ttlMs`), then one indexed query.
 * The state is re-evaluated against the clock on every call, so expiry and the end of a
 * rotation grace period take effect on time even for cached keys.
 */
export function createKeyVerifier(deps: {
  db: Queryable;
  pepper: string;
  ttlMs: number;
  clock?: () => Date;
  maxEntries?: number;
  /** False while the invalidation bus is not subscribed: the cache is bypassed meanwhile. */
  isLive?: () => boolean;
  /**
   * Reads the key-version counter. With it, the cache is used only when the counter was read
   * less than `versionCheckMs` ago, and dropped whenever it moved: a change whose message was
   * lost is still seen within that time (docs/operations.md#failure-behaviour).
   */
  readVersion?: () => Promise<string>;
  /** @defaultValue 1000 */
  versionCheckMs?: number;
  /** Counts well-formed keys that match nothing per client and paces its lookups past its limit. */
  failures?: AuthFailureLimiter;
  /**
   * How long a well-formed key that matched no row is answered 401 without a lookup. Safe:
   * a new key's secret is random, so nobody presents it before it exists. @defaultValue 30,000
   */
  unknownTtlMs?: number;
  /** Told whether each lookup of a well-formed key was served by the cache (metrics). */
  onCacheLookup?: (hit: boolean) => void;
}): KeyVerifier {
  const clock = deps.clock ?? (() => new Date());
  const maxEntries = deps.maxEntries ?? 10_000;
  const cache = new Map<string, Entry>();
  const unknownTtlMs = deps.unknownTtlMs ?? 30_000;
  /** Hashes that matched no row, with when that answer expires. */
  const unknown = new Map<string, number>();
  const inflight = new Map<string, Promise<AuthenticatedKey | null>>();
  // Bumped by every invalidation: a lookup that started before one may have read the row as
  // it was before the revoke, so its answer is used once but never cached.
  let generation = 0;
  const isLive = deps.isLive ?? (() => true);
  const versionCheckMs = deps.versionCheckMs ?? 1_000;
  let version: string | null = null;
  /** When the last successful read of the counter started: what it saw holds from then. */
  let checkedAt = -Infinity;
  let checking: Promise<void> | null = null;

  function forgetAll(): void {
    generation++;
    inflight.clear();
    cache.clear();
  }

  /**
   * Whether the cache may be trusted now; reads the counter at most once per `versionCheckMs`.
   * In the last quarter of that time a request starts the next read without waiting for it, so
   * steady traffic never waits on the counter (a request waited for it once a second before).
   */
  async function cacheTrusted(): Promise<boolean> {
    if (!isLive()) return false;
    if (!deps.readVersion) return true;
    const age = Date.now() - checkedAt;
    if (age < versionCheckMs) {
      if (age >= versionCheckMs * READ_AHEAD_AT) void readCounter();
      return true;
    }
    await readCounter();
    return Date.now() - checkedAt < versionCheckMs;
  }

  /** One read of the counter at a time; what it saw holds from when it started. Never rejects. */
  function readCounter(): Promise<void> {
    return (checking ??= (async () => {
      const started = Date.now();
      try {
        const v = await deps.readVersion!();
        if (v !== version) forgetAll(); // the first read too: entries from before it are unchecked
        version = v;
        checkedAt = started;
      } catch {
        // Unknown: the cache stays untrusted until a read succeeds.
      } finally {
        checking = null;
      }
    })());
  }

  async function load(hash: string): Promise<AuthenticatedKey | null> {
    return findKeyByHash(deps.db, hash);
  }

  function remember(hash: string, key: AuthenticatedKey): void {
    if (deps.ttlMs <= 0) return;
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
    cache.set(hash, { key, until: Date.now() + deps.ttlMs });
  }

  return {
    async verify(secret, client) {
      if (!isWellFormedApiKey(secret)) return { ok: false, code: 'invalid_api_key' };
      const hash = hashApiKey(deps.pepper, secret);
      let key: AuthenticatedKey | null = null;
      const hit = (await cacheTrusted()) ? cache.get(hash) : undefined;
      const unknownUntil = unknown.get(hash);
      if (unknownUntil !== undefined && unknownUntil <= Date.now()) unknown.delete(hash);
      if (hit && hit.until > Date.now()) {
        key = hit.key;
        deps.onCacheLookup?.(true);
      } else if (unknownUntil !== undefined && unknownUntil > Date.now()) {
        if (client) deps.failures?.recordFailure(client);
        return { ok: false, code: 'invalid_api_key' };
      } else {
        const retryAfterMs = client ? (deps.failures?.admitLookup(client) ?? 0) : 0;
        if (retryAfterMs > 0) return { ok: false, code: 'rate_limited', retryAfterMs };
        deps.onCacheLookup?.(false);
        const started = generation;
        let pending = inflight.get(hash);
        if (!pending) {
          const p: Promise<AuthenticatedKey | null> = load(hash).finally(() => {
            if (inflight.get(hash) === p) inflight.delete(hash);
          });
          inflight.set(hash, p);
          pending = p;
        }
        key = await pending;
        if (key && started === generation) remember(hash, key);
      }
      if (!key) {
        if (unknownTtlMs > 0) {
          if (unknown.size >= maxEntries) unknown.delete(unknown.keys().next().value as string);
          unknown.set(hash, Date.now() + unknownTtlMs);
        }
        if (client) deps.failures?.recordFailure(client);
        return { ok: false, code: 'invalid_api_key' };
      }
      // A revoked or expired key is a real key, not a guess: it does not count as a failure.
      const state = effectiveKeyState(key, clock());
      if (state === 'revoked') return { ok: false, code: 'key_revoked' };
      if (!authenticates(state)) return { ok: false, code: 'key_expired' };
      return { ok: true, key: state === key.state ? key : { ...key, state } };
    },
    invalidate(message) {
      if (message.kind === 'all') return forgetAll();
      generation++;
      inflight.clear(); // requests from now on read the row afresh
      for (const [hash, entry] of cache) {
        if (message.kind === 'key' ? entry.key.id === message.id : entry.key.workspace.id === message.id) {
          cache.delete(hash);
        }
      }
    },
  };
}
