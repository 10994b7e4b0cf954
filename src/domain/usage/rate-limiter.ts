import type { Redis } from 'ioredis';
import type { Db } from '../../db/pool.js';
import { REDIS_STEP_DEADLINE_MS, withDeadline } from '../../lib/deadline.js';
import { addWindowHits, deleteWindowsBefore } from './counter-store.js';

/**
 * Fixed-window request limits shared by every process (docs/api.md#rate-limits): in Redis when
 * there is one, else in an UNLOGGED PostgreSQL table. A window is one minute by default.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

export interface RateLimiter {
  hit(bucket: string, limit: number, windowMs?: number): Promise<RateDecision>;
}

/** The shared count of a window: adds `n` hits and returns the window's new total. */
export interface WindowCounter {
  add(bucket: string, windowStart: number, n: number, windowMs: number): Promise<number>;
}

function decide(
  hits: number,
  limit: number,
  windowStart: number,
  windowMs: number,
  now: number,
): RateDecision {
  return {
    allowed: hits <= limit,
    limit,
    remaining: Math.max(0, limit - hits),
    resetMs: Math.max(0, windowStart + windowMs - now),
  };
}

export function createRedisWindowCounter(redis: Redis, prefix = 'svc'): WindowCounter {
  return {
    async add(bucket, windowStart, n, windowMs) {
      const key = `${prefix}:rl:${bucket}:${windowStart}`;
      // Redis down: 503 `overloaded` within a second, not a request held for minutes (docs/operations.md#failure-behaviour).
      const [[, hits]] = (await withDeadline(
        () =>
          redis
            .multi()
            .incrby(key, n)
            .pexpire(key, windowMs * 2)
            .exec(),
        REDIS_STEP_DEADLINE_MS,
        'rate-limit store',
      )) as [[null, number]];
      return hits;
    },
  };
}

export function createPgWindowCounter(db: Db, clock: () => number = Date.now): WindowCounter {
  let lastSweep = 0;
  return {
    async add(bucket, windowStart, n) {
      const hits = await addWindowHits(db, bucket, new Date(windowStart), n);
      const now = clock();
      if (now - lastSweep > 60_000) {
        lastSweep = now;
        void deleteWindowsBefore(db, new Date(now - 3_600_000)).catch(() => undefined);
      }
      return hits;
    },
  };
}

interface Lease {
  windowStart: number;
  /** Hits this process took from the shared count and has not used yet. */
  tokens: number;
  /** The shared count after this process's last lease. */
  total: number;
  /** The limit at which the shared count was found spent: refused locally until the window ends. */
  spentAt: number | null;
  /** The lease being fetched: requests that find no tokens wait for it instead of fetching their own. */
  fetching: Promise<void> | null;
}

/**
 * Fixed-window limits over a shared counter, without a round trip per request: a process
 * takes hits from the shared count in leases of `leaseFraction` of the limit (at least one)
 * and spends them locally; one lease is fetched at a time per bucket, and a window found spent
 * is refused locally until it ends. A limit below 1 / `leaseFraction` (50 a minute at the
 * default 2%) leases one hit at a time, which is exactly the per-request count.
 *
 * Never more than `limit` requests pass in a window, across all processes; a process's unused
 * lease can make others refuse up to one lease early — the price of not asking the shared
 * store every time. `RateLimit-Remaining` counts the window's hits as this process sees them.
 */
export function createRateLimiter(
  counter: WindowCounter,
  options: { clock?: () => number; leaseFraction?: number; maxBuckets?: number } = {},
): RateLimiter {
  const clock = options.clock ?? Date.now;
  const fraction = options.leaseFraction ?? 0.02;
  const maxBuckets = options.maxBuckets ?? 50_000;
  const leases = new Map<string, Lease>();

  function leaseFor(bucket: string, windowStart: number): Lease {
    let lease = leases.get(bucket);
    if (!lease || lease.windowStart !== windowStart) {
      if (leases.size >= maxBuckets) {
        for (const [b, l] of leases) if (l.windowStart !== windowStart && !l.fetching) leases.delete(b);
      }
      lease = { windowStart, tokens: 0, total: 0, spentAt: null, fetching: null };
      leases.set(bucket, lease);
    }
    return lease;
  }

  async function fetchLease(bucket: string, lease: Lease, limit: number, windowMs: number): Promise<void> {
    const size = Math.max(1, Math.floor(limit * fraction));
    const total = await counter.add(bucket, lease.windowStart, size, windowMs);
    const granted = Math.max(0, Math.min(size, limit - (total - size)));
    lease.tokens += granted;
    lease.total = Math.max(lease.total, total);
    if (granted === 0) lease.spentAt = limit;
  }

  return {
    async hit(bucket, limit, windowMs = 60_000) {
      const now = clock();
      const windowStart = now - (now % windowMs);
      const lease = leaseFor(bucket, windowStart);
      for (;;) {
        if (lease.tokens > 0) {
          lease.tokens--;
          return decide(Math.min(limit, lease.total - lease.tokens), limit, windowStart, windowMs, now);
        }
        if (lease.spentAt !== null && lease.spentAt >= limit)
          return decide(limit + 1, limit, windowStart, windowMs, now);
        if (!lease.fetching) {
          lease.fetching = fetchLease(bucket, lease, limit, windowMs).finally(() => {
            lease.fetching = null;
          });
        }
        await lease.fetching;
      }
    },
  };
}

/** Headers of a limited response: RFC 9110 Retry-After and the IETF RateLimit fields. */
export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  const reset = Math.ceil(d.resetMs / 1000);
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(d.limit),
    'RateLimit-Remaining': String(d.remaining),
    'RateLimit-Reset': String(reset),
  };
  if (!d.allowed) headers['Retry-After'] = String(Math.max(1, reset));
  return headers;
}
