/**
 * Per-provider client-side rate limits: requests per minute and tokens per minute, each a
 * fixed window (`capacity-window.ts`). Rate limits are enforced in the shared (docs/operations.md#processes)
 * store, so with Redis every process of a deployment draws from the same windows, and the
 * limits in force are the newest configuration any process offered (docs/operations.md#failure-behaviour).
 *
 * Capacity is taken in blocks of about 2% of a limit (never more than the window has left)
 * and spent locally, so a call costs a Redis round trip only once per block; unspent blocks
 * lapse with the window, so the shared limit stays within one block per process of exact.
 * A call never waits for capacity longer than `maxWaitMs`: past it, it fails with
 * `LimiterBusyError` (the router then goes to the next tier), and the provider's own
 * rate-limit headers pause the limiter before the provider starts answering 429.
 */
import { Redis } from 'ioredis';
import type { ResponseHeaders } from './pooled-post.js';
import {
  createLocalWindow,
  createRedisWindow,
  type CapacityWindow,
  type Limits,
  type Resource,
} from './capacity-window.js';

export interface ProviderLimiterOptions {
  /** Shared id, e.g. `triage-provider-openai`; processes using the same id share the limit. */
  id: string;
  requestsPerMinute: number;
  tokensPerMinute: number;
  /** An ioredis client (or a URL, for a client the limiter owns); absent → limits are per process. */
  redis?: string | Redis;
  /** Window length. @defaultValue 60000 */
  intervalMs?: number;
  /** Longest a call waits for capacity before `LimiterBusyError`. @defaultValue 5000 */
  maxWaitMs?: number;
  /** Told when the limits in force differ from this process's configuration (and when they change). */
  onLimits?: (inForce: Limits, configured: Limits) => void;
  /** Told when Redis failed and this call used a per-process window instead. */
  onStoreError?: (err: Error) => void;
  /** Orders configurations: the newest offer wins. @defaultValue this process's start time */
  offeredAt?: number;
}

/** Thrown inside `schedule` only when the caller's signal aborted while the job waited. */
export class LimiterAbortedError extends Error {
  override readonly name = 'LimiterAbortedError';
}

/** Thrown when capacity would not be there within `maxWaitMs`. */
export class LimiterBusyError extends Error {
  override readonly name = 'LimiterBusyError';
  constructor(readonly retryAfterMs: number) {
    super('provider capacity exhausted for longer than the wait allowed');
  }
}

export interface ProviderLimiter {
  /** Runs `fn` once both a request slot and `tokens` tokens are available. */
  schedule<T>(tokens: number, fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Reads the provider's rate-limit headers from a response and pauses before it would answer 429. */
  observe?(headers: ResponseHeaders): void;
  /** Releases Redis connections it created. */
  close(): Promise<void>;
}

const STORE_DEADLINE_MS = 1_000;
/** Started once per process: a later start is a newer deployment, whose limits win. */
const PROCESS_STARTED_AT = Date.now();

/** Creates the two-window limiter of one provider. */
export function createProviderLimiter(options: ProviderLimiterOptions): ProviderLimiter {
  const windowMs = options.intervalMs ?? 60_000;
  const maxWaitMs = options.maxWaitMs ?? 5_000;
  const configured: Limits = {
    requestsPerMinute: Math.max(1, Math.floor(options.requestsPerMinute)),
    tokensPerMinute: Math.max(1, Math.floor(options.tokensPerMinute)),
  };
  const local = createLocalWindow(configured, windowMs);
  let ownClient: Redis | undefined;
  let shared: ReturnType<typeof createRedisWindow> | undefined;
  if (options.redis !== undefined) {
    let client: Redis;
    if (typeof options.redis === 'string') {
      ownClient = new Redis(options.redis, { maxRetriesPerRequest: 1 });
      ownClient.on('error', () => undefined);
      client = ownClient;
    } else {
      client = options.redis;
    }
    shared = createRedisWindow({
      redis: client,
      id: options.id,
      limits: configured,
      windowMs,
      offeredAt: options.offeredAt ?? PROCESS_STARTED_AT,
    });
  }
  let inForce: Limits = { ...configured };
  function note(resource: Resource, limit: number): void {
    const field = resource === 'requests' ? 'requestsPerMinute' : 'tokensPerMinute';
    if (inForce[field] === limit) return;
    inForce = { ...inForce, [field]: limit };
    options.onLimits?.(inForce, configured);
  }
  if (shared) {
    void withDeadline(shared.offer()).then(
      (limits) => {
        note('requests', limits.requestsPerMinute);
        note('tokens', limits.tokensPerMinute);
      },
      (err: Error) => options.onStoreError?.(err),
    );
  }

  const store: CapacityWindow = {
    async take(resource, want) {
      if (shared) {
        try {
          const g = await withDeadline(shared.take(resource, want));
          note(resource, g.limit);
          return g;
        } catch (err) {
          options.onStoreError?.(err as Error);
        }
      }
      return local.take(resource, want);
    },
    close: () => undefined,
  };
  const requests = new BlockAllowance(store, 'requests', () => inForce.requestsPerMinute);
  const tokens = new BlockAllowance(store, 'tokens', () => inForce.tokensPerMinute);
  let pausedUntil = 0;

  return {
    async schedule<T>(weight: number, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      const deadline = Date.now() + maxWaitMs;
      if (signal?.aborted) throw new LimiterAbortedError('aborted while waiting for a rate-limit slot');
      if (pausedUntil > Date.now()) {
        if (pausedUntil > deadline) throw new LimiterBusyError(pausedUntil - Date.now());
        await sleep(pausedUntil - Date.now(), signal);
      }
      // A job heavier than a whole window would wait forever; cap it at one window's budget.
      const w = Math.max(1, Math.min(Math.ceil(weight), inForce.tokensPerMinute));
      await tokens.take(w, deadline, signal);
      await requests.take(1, deadline, signal);
      if (signal?.aborted) throw new LimiterAbortedError('aborted while waiting for a rate-limit slot');
      return fn();
    },
    observe(headers) {
      const until = pauseFromHeaders(headers, Date.now(), windowMs);
      if (until > pausedUntil) pausedUntil = until;
    },
    async close() {
      ownClient?.disconnect();
    },
  };
}

/**
 * The provider's own view of its limits: OpenAI-style `x-ratelimit-remaining-*` with
 * `x-ratelimit-reset-*` (`1s`, `6m0s`, `20ms`), Anthropic's `anthropic-ratelimit-*-remaining`
 * with `-reset` (RFC 3339). When requests or tokens left reach zero, pause until the reset
 * (at most one window); 0 when there is nothing to wait for.
 */
export function pauseFromHeaders(headers: ResponseHeaders, now: number, maxMs: number): number {
  let until = 0;
  for (const [remainingName, resetName] of LIMIT_HEADERS) {
    const remaining = headers.get(remainingName);
    if (remaining === null || Number(remaining) > 0) continue;
    const resetAt = parseReset(headers.get(resetName), now);
    if (resetAt !== undefined) until = Math.max(until, Math.min(resetAt, now + maxMs));
  }
  return until;
}

/**
 * The (remaining, reset) header pairs {@link pauseFromHeaders} reads, built once: every provider
 * answer is read against them (building the names per answer was ~2 KiB of garbage a request).
 */
const LIMIT_HEADERS: readonly (readonly [string, string])[] = [
  'requests',
  'tokens',
  'input-tokens',
  'output-tokens',
].flatMap((kind) => [
  [`x-ratelimit-remaining-${kind}`, `x-ratelimit-reset-${kind}`] as const,
  [`anthropic-ratelimit-${kind}-remaining`, `anthropic-ratelimit-${kind}-reset`] as const,
]);

function parseReset(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  const date = Date.parse(value);
  if (/^\d{4}-/.test(value) && Number.isFinite(date)) return date;
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (parts.length === 0) return undefined;
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
  return now + parts.reduce((sum, [, n, u]) => sum + Number(n) * unit[u as keyof typeof unit], 0);
}

/**
 * Runs a provider HTTP call under the limiter when there is one; a caller abort while waiting
 * becomes `onAbort()`, capacity not there in time becomes `onBusy(retryAfterMs)` (provider
 * calls return results, not exceptions).
 */
export async function runLimited<T extends { ok: boolean }>(
  limiter: ProviderLimiter | undefined,
  tokens: number,
  signal: AbortSignal | undefined,
  fn: () => Promise<T>,
  onAbort: () => T,
  onBusy?: (retryAfterMs: number) => T,
): Promise<T> {
  if (limiter === undefined) return fn();
  try {
    return await limiter.schedule(tokens, fn, signal);
  } catch (error) {
    if (error instanceof LimiterAbortedError) return onAbort();
    if (error instanceof LimiterBusyError && onBusy) return onBusy(error.retryAfterMs);
    throw error;
  }
}

/** Capacity taken from a window in blocks and spent locally (see the module comment). */
class BlockAllowance {
  private available = 0;
  private windowEndsAt = 0;
  private pending: Promise<number> | null = null;

  constructor(
    private readonly store: CapacityWindow,
    private readonly resource: Resource,
    private readonly limit: () => number,
  ) {}

  async take(n: number, deadline: number, signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (Date.now() >= this.windowEndsAt) this.available = 0;
      if (this.available >= n) {
        this.available -= n;
        return;
      }
      // One request to the store at a time; callers wait for it, then look again.
      this.pending ??= this.fetch(n - this.available).finally(() => (this.pending = null));
      const resetMs = await waitOrAbort(this.pending, signal);
      if (this.available >= n) continue;
      if (resetMs > 0) {
        if (Date.now() + resetMs > deadline) throw new LimiterBusyError(resetMs);
        await sleep(resetMs, signal);
      }
    }
  }

  /** Adds what the window grants to `available`; returns ms until the window resets when short. */
  private async fetch(missing: number): Promise<number> {
    const block = Math.max(1, Math.floor(this.limit() / 50));
    const g = await this.store.take(this.resource, Math.max(block, missing));
    // A new window: what was held of the last one has lapsed.
    if (Date.now() >= this.windowEndsAt) this.available = 0;
    this.windowEndsAt = Date.now() + g.resetMs;
    this.available += g.granted;
    return g.granted >= missing ? 0 : Math.max(1, g.resetMs);
  }
}

function withDeadline<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('rate-limit store timed out')), STORE_DEADLINE_MS);
    }),
  ]).finally(() => clearTimeout(timer));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return waitOrAbort(new Promise<void>((r) => setTimeout(r, ms)), signal);
}

function waitOrAbort<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new LimiterAbortedError('aborted while waiting for a rate-limit slot'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
