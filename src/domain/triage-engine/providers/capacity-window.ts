import type { Redis } from 'ioredis';

/**
 * Where a provider limiter takes capacity from: a fixed window per resource (requests or
 * tokens a minute), shared through Redis by every process of a deployment or kept in the
 * process. A take may be granted in part (never more than the limit has left), so a block
 * is never larger than what remains and no limit is too small or too large (1 to 10⁹).
 *
 * The limits themselves are shared too (docs/operations.md#failure-behaviour): each process offers its configured
 * limits with its start time, the newest offer wins, and every take reads the limit in force,
 * so processes that disagree (a rolling deploy that raises a limit) converge on the newest
 * configuration instead of on whichever process came first.
 */
export interface Limits {
  requestsPerMinute: number;
  tokensPerMinute: number;
}

export type Resource = 'requests' | 'tokens';

export interface Grant {
  granted: number;
  /** The limit in force for this resource (the newest configuration offered). */
  limit: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

export interface CapacityWindow {
  take(resource: Resource, want: number): Promise<Grant>;
  close(): void;
}

const FIELD: Record<Resource, keyof Limits> = { requests: 'requestsPerMinute', tokens: 'tokensPerMinute' };

/** In one process: the configured limits, nothing to agree on. */
export function createLocalWindow(limits: Limits, windowMs: number, now = Date.now): CapacityWindow {
  const used: Record<Resource, { start: number; n: number }> = {
    requests: { start: 0, n: 0 },
    tokens: { start: 0, n: 0 },
  };
  return {
    async take(resource, want) {
      const t = now();
      const start = t - (t % windowMs);
      const w = used[resource];
      if (w.start !== start) Object.assign(w, { start, n: 0 });
      const limit = limits[FIELD[resource]];
      const granted = Math.max(0, Math.min(want, limit - w.n));
      w.n += granted;
      return { granted, limit, resetMs: start + windowMs - t };
    },
    close: () => undefined,
  };
}

// KEYS: the limits hash, the window counter. ARGV: field, want, windowMs, own rpm, own tpm, own offer time.
// The hash is re-created from the caller's offer when missing (Redis restarted or flushed).
const TAKE = `
local limit = tonumber(redis.call('HGET', KEYS[1], ARGV[1]))
if not limit then
  redis.call('HSET', KEYS[1], 'requestsPerMinute', ARGV[4], 'tokensPerMinute', ARGV[5], 'at', ARGV[6])
  limit = tonumber(redis.call('HGET', KEYS[1], ARGV[1]))
end
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
local grant = math.min(tonumber(ARGV[2]), limit - used)
if grant < 0 then grant = 0 end
if grant > 0 then
  redis.call('INCRBY', KEYS[2], grant)
  redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]) * 2)
end
return {grant, limit}
`;

// KEYS: the limits hash. ARGV: rpm, tpm, offer time. The newest offer wins; returns the limits in force.
const OFFER = `
local at = tonumber(redis.call('HGET', KEYS[1], 'at') or '-1')
if tonumber(ARGV[3]) >= at then
  redis.call('HSET', KEYS[1], 'requestsPerMinute', ARGV[1], 'tokensPerMinute', ARGV[2], 'at', ARGV[3])
end
return redis.call('HMGET', KEYS[1], 'requestsPerMinute', 'tokensPerMinute')
`;

/** Shared through Redis under `id`; `offeredAt` orders the configurations (process start time). */
export function createRedisWindow(options: {
  redis: Redis;
  id: string;
  limits: Limits;
  windowMs: number;
  offeredAt: number;
  now?: () => number;
}): CapacityWindow & { offer(): Promise<Limits> } {
  const { redis, id, limits, windowMs } = options;
  const now = options.now ?? Date.now;
  const hash = `${id}:limits`;
  return {
    async offer() {
      const [rpm, tpm] = (await redis.eval(
        OFFER,
        1,
        hash,
        limits.requestsPerMinute,
        limits.tokensPerMinute,
        options.offeredAt,
      )) as [string, string];
      return { requestsPerMinute: Number(rpm), tokensPerMinute: Number(tpm) };
    },
    async take(resource, want) {
      const t = now();
      const start = t - (t % windowMs);
      const [granted, limit] = (await redis.eval(
        TAKE,
        2,
        hash,
        `${id}:${resource}:${start}`,
        FIELD[resource],
        want,
        windowMs,
        limits.requestsPerMinute,
        limits.tokensPerMinute,
        options.offeredAt,
      )) as [number, number];
      return { granted, limit, resetMs: start + windowMs - t };
    },
    close: () => undefined,
  };
}
