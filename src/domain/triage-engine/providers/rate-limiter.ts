/**
 * Per-provider client-side rate limits with bottleneck: a request reservoir (requests per minute)
 * and a token reservoir in which each job weighs its estimated tokens (tokens per minute).
 * DECISIONS §1: rate limits are enforced in the shared store, so with a Redis connection every
 * process uses bottleneck's Redis clustering (datastore `ioredis`) under one shared limiter id
 * and draws from the same reservoirs.
 */
import Bottleneck from 'bottleneck';
import { Redis } from 'ioredis';

export interface ProviderLimiterOptions {
  /** Shared id, e.g. `triage-provider-openai`; processes using the same id share the limit. */
  id: string;
  requestsPerMinute: number;
  tokensPerMinute: number;
  /** A Redis URL or an ioredis client; absent → limits are per process. */
  redis?: string | Redis;
  /** Reservoir refresh period. @defaultValue 60000 */
  intervalMs?: number;
}

/** Thrown inside `schedule` only when the caller's signal aborted while the job waited. */
export class LimiterAbortedError extends Error {
  override readonly name = 'LimiterAbortedError';
}

export interface ProviderLimiter {
  /** Runs `fn` once both a request slot and `tokens` tokens are available. */
  schedule<T>(tokens: number, fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Releases Redis connections it created. */
  close(): Promise<void>;
}

function reservoir(amount: number, intervalMs: number) {
  return { reservoir: amount, reservoirRefreshAmount: amount, reservoirRefreshInterval: intervalMs };
}

/** Creates the two-reservoir limiter of one provider. */
export function createProviderLimiter(options: ProviderLimiterOptions): ProviderLimiter {
  const intervalMs = options.intervalMs ?? 60_000;
  const ownClient =
    typeof options.redis === 'string' ? new Redis(options.redis, { maxRetriesPerRequest: 3 }) : undefined;
  const client = ownClient ?? (typeof options.redis === 'object' ? options.redis : undefined);
  const connection = client ? new Bottleneck.IORedisConnection({ client, Redis }) : undefined;
  // clearDatastore false: a restarting process must not reset what its peers have already spent.
  const shared = connection ? { datastore: 'ioredis', connection, clearDatastore: false } : {};
  const requests = new Bottleneck({
    id: `${options.id}:rpm`,
    ...shared,
    ...reservoir(options.requestsPerMinute, intervalMs),
  });
  const tokens = new Bottleneck({
    id: `${options.id}:tpm`,
    ...shared,
    ...reservoir(options.tokensPerMinute, intervalMs),
  });

  // Bottleneck handles a few hundred jobs a second per limiter (measured: ~400/s, p50 ≈ 50 ms
  // with 20 waiting callers), and every call went through two of them. Capacity is therefore
  // taken from each reservoir in blocks of about 2% of its per-interval budget and spent locally;
  // a process holds at most one block more than it uses, and unspent blocks lapse with the
  // interval, so the shared limits stay within one block per process of exact.
  const requestBlock = new BlockAllowance(
    requests,
    Math.max(1, Math.floor(options.requestsPerMinute / 50)),
    intervalMs,
  );
  const tokenBlock = new BlockAllowance(
    tokens,
    Math.max(1, Math.floor(options.tokensPerMinute / 50)),
    intervalMs,
  );

  return {
    async schedule<T>(weight: number, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      // A job heavier than the whole reservoir would wait forever; cap it at one minute's budget.
      const w = Math.max(1, Math.min(Math.ceil(weight), options.tokensPerMinute));
      if (signal?.aborted) throw new LimiterAbortedError('aborted while waiting for a rate-limit slot');
      await tokenBlock.take(w, signal);
      await requestBlock.take(1, signal);
      if (signal?.aborted) throw new LimiterAbortedError('aborted while waiting for a rate-limit slot');
      return fn();
    },
    async close() {
      await Promise.allSettled([requests.disconnect(false), tokens.disconnect(false)]);
      if (connection) await connection.disconnect(false);
      // A caller-provided client is the caller's to close.
      if (ownClient) ownClient.disconnect();
    },
  };
}

/**
 * Runs a provider HTTP call under the limiter when there is one; a caller abort while waiting
 * becomes a `timeout` result instead of an exception (provider calls return results).
 */
export async function runLimited<T extends { ok: boolean }>(
  limiter: ProviderLimiter | undefined,
  tokens: number,
  signal: AbortSignal | undefined,
  fn: () => Promise<T>,
  onAbort: () => T,
): Promise<T> {
  if (limiter === undefined) return fn();
  try {
    return await limiter.schedule(tokens, fn, signal);
  } catch (error) {
    if (error instanceof LimiterAbortedError) return onAbort();
    throw error;
  }
}

/** Capacity taken from a Bottleneck reservoir in blocks and spent locally (see above). */
class BlockAllowance {
  private available = 0;
  private acquiredAt = 0;
  private pending: Promise<void> | null = null;

  constructor(
    private readonly limiter: Bottleneck,
    private readonly block: number,
    private readonly intervalMs: number,
  ) {}

  async take(n: number, signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (Date.now() - this.acquiredAt >= this.intervalMs) this.available = 0;
      if (this.available >= n) {
        this.available -= n;
        return;
      }
      if (!this.pending) {
        const want = Math.max(this.block, n - this.available);
        this.pending = this.limiter
          .schedule({ weight: want }, async () => undefined)
          .then(() => {
            if (Date.now() - this.acquiredAt >= this.intervalMs) this.available = 0;
            this.available += want;
            this.acquiredAt = Date.now();
          })
          .finally(() => {
            this.pending = null;
          });
      }
      await waitOrAbort(this.pending, signal);
    }
  }
}

function waitOrAbort(p: Promise<void>, signal?: AbortSignal): Promise<void> {
  if (!signal) return p;
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(new LimiterAbortedError('aborted while waiting for a rate-limit slot'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
