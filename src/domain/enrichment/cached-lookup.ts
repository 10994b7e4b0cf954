import type { Queryable } from '../../db/pool.js';
import { lookupEnrichment, normaliseCveIds } from './lookup.js';
import type { CveEnrichment, EnrichmentLookup } from './types.js';

export interface CachedLookupOptions {
  /**
   * How long an answer is reused. The feeds change once a day, so a few minutes of
   * staleness after a refresh is harmless.
   * @defaultValue 300_000 (5 minutes)
   */
  ttlMs?: number;
  /**
   * Most CVEs kept; the least recently used go first.
   * @defaultValue 10_000
   */
  max?: number;
  /** Clock, for tests. @defaultValue Date.now */
  now?: () => number;
}

/** An `EnrichmentLookup` with its cache exposed for tests and for dropping after a refresh. */
export type CachedEnrichmentLookup = EnrichmentLookup & {
  /** Forgets everything, e.g. after `refreshEnrichment` in the same process. */
  clear(): void;
  readonly size: number;
};

interface Entry {
  /** null: no feed knows the CVE; cached too, so such a CVE does not cost a query on every request. */
  value: CveEnrichment | null;
  expires: number;
}

/**
 * A small in-process LRU + TTL cache in front of `lookupEnrichment`, since the triage path
 * asks per request. Only the misses of a call go to the database, in one query. A `Map`
 * keeps insertion order, so re-inserting on use makes its first key the least recently used.
 */
export function createCachedEnrichmentLookup(
  db: Queryable,
  options: CachedLookupOptions = {},
): CachedEnrichmentLookup {
  const ttlMs = options.ttlMs ?? 300_000;
  const max = Math.max(1, options.max ?? 10_000);
  const now = options.now ?? Date.now;
  const cache = new Map<string, Entry>();

  const lookup = async (cveIds: readonly string[]): Promise<Map<string, CveEnrichment>> => {
    const ids = normaliseCveIds(cveIds);
    const result = new Map<string, CveEnrichment>();
    const misses: string[] = [];
    const t = now();
    for (const id of ids) {
      const hit = cache.get(id);
      if (hit && hit.expires > t) {
        cache.delete(id);
        cache.set(id, hit);
        if (hit.value) result.set(id, hit.value);
      } else {
        misses.push(id);
      }
    }
    if (misses.length === 0) return result;
    const found = await lookupEnrichment(db, misses);
    const expires = now() + ttlMs;
    for (const id of misses) {
      const value = found.get(id) ?? null;
      cache.delete(id);
      cache.set(id, { value, expires });
      if (value) result.set(id, value);
    }
    while (cache.size > max) {
      const oldest = cache.keys().next().value as string;
      cache.delete(oldest);
    }
    return result;
  };

  // defineProperty, not Object.assign: assign would copy the getter's value once.
  return Object.defineProperties(lookup, {
    clear: { value: () => cache.clear() },
    size: { get: () => cache.size },
  }) as CachedEnrichmentLookup;
}
