import type { Redis } from 'ioredis';
import type { Queryable } from '../../db/pool.js';

/**
 * Fixed-window request limits shared by every process (DECISIONS §1, §3): in Redis when
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

function decide(hits: number, limit: number, windowStart: number, windowMs: number, now: number): RateDecision {
  return {
    allowed: hits <= limit,
    limit,
    remaining: Math.max(0, limit - hits),
    resetMs: Math.max(0, windowStart + windowMs - now),
  };
}

export function createRedisRateLimiter(redis: Redis, clock: () => number = Date.now, prefix = 'svc'): RateLimiter {
  return {
    async hit(bucket, limit, windowMs = 60_000) {
      const now = clock();
      const windowStart = now - (now % windowMs);
      const key = `${prefix}:rl:${bucket}:${windowStart}`;
      const [[, hits]] = (await redis.multi().incr(key).pexpire(key, windowMs * 2).exec()) as [[null, number]];
      return decide(hits, limit, windowStart, windowMs, now);
    },
  };
}

export function createPgRateLimiter(db: Queryable, clock: () => number = Date.now): RateLimiter {
  let lastSweep = 0;
  return {
    async hit(bucket, limit, windowMs = 60_000) {
      const now = clock();
      const windowStart = now - (now % windowMs);
      const res = await db.query<{ hits: number }>(
        `INSERT INTO rate_limit_windows (bucket, window_start, hits) VALUES ($1, $2, 1)
         ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_limit_windows.hits + 1
         RETURNING hits`,
        [bucket, new Date(windowStart)],
      );
      if (now - lastSweep > 60_000) {
        lastSweep = now;
        void db.query(`DELETE FROM rate_limit_windows WHERE window_start < $1`, [new Date(now - 3_600_000)]).catch(() => undefined);
      }
      return decide(res.rows[0]?.hits ?? 1, limit, windowStart, windowMs, now);
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
