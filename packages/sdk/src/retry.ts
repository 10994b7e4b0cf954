import { setTimeout as sleep } from 'node:timers/promises';
import { VulnTriageError } from './errors.js';

/** How the client retries what may succeed later (429, 502–504, network errors). */
export interface RetryPolicy {
  /** Tries in all, the first included. @defaultValue 5 */
  attempts: number;
  /** Wait before the first retry, doubled each time (with jitter) when the server names none. @defaultValue 500 */
  baseDelayMs: number;
  /** Longest wait between tries that the client picks itself. @defaultValue 30000 */
  maxDelayMs: number;
  /**
   * Longest `Retry-After` the client waits for. A longer one (a monthly quota that resets next
   * month, say) ends the call at once: a CI job should fail, not sleep for days.
   * @defaultValue 120000
   */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
};

/** Told before each wait: which retry comes next, how long until it, and what failed. */
export type RetryListener = (info: { retry: number; waitMs: number; error: VulnTriageError }) => void;

/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * Statuses worth another try: 429 (but not `monthly_limit_exceeded`, which no wait of a CI job
 * cures), 502, 503 and 504. A 409 `conflict` means a concurrent upload with the same
 * Idempotency-Key is still in flight, and the server's own detail says to retry
 * (docs/api.md#idempotency).
 */
export function isRetryable(status: number, code: string | undefined): boolean {
  if (status === 429) return code !== 'monthly_limit_exceeded';
  if (status === 409) return code === 'conflict';
  return status === 502 || status === 503 || status === 504;
}

/** The wait before retry number `retry` (1-based): the server's `Retry-After`, else capped exponential backoff with jitter. */
export function backoffMs(
  retry: number,
  retryAfterMs: number | null,
  policy: RetryPolicy,
  random = Math.random,
): number {
  if (retryAfterMs !== null) return retryAfterMs;
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  // "Equal jitter": at least half the step, so many CI jobs retrying together spread out.
  return Math.round(exp / 2 + (random() * exp) / 2);
}

/** What one try ended with: a value, or an error that another try may cure. */
export type Attempt<T> =
  | { ok: true; value: T }
  | { ok: false; error: VulnTriageError; retryable: boolean; retryAfterMs: number | null };

/**
 * Runs `attempt` until it succeeds, fails for good, or the policy's tries are spent; then
 * throws the last error (marked `exhausted` when it was retried). `onRetry` is told before each wait.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  attempt: (n: number) => Promise<Attempt<T>>,
  onRetry: RetryListener = () => undefined,
): Promise<T> {
  for (let n = 1; ; n++) {
    const result = await attempt(n);
    if (result.ok) return result.value;
    const { error } = result;
    const give = (suffix: string) =>
      new VulnTriageError(`${error.message} (${suffix})`, {
        kind: error.kind,
        status: error.status,
        problem: error.problem,
        exhausted: true,
        cause: error,
      });
    if (!result.retryable || n >= policy.attempts) {
      if (!result.retryable || n === 1) throw error;
      throw give(`gave up after ${n} tries`);
    }
    if (result.retryAfterMs !== null && result.retryAfterMs > policy.maxRetryAfterMs) {
      throw give(`the server asks to wait ${Math.ceil(result.retryAfterMs / 1000)} s; not waiting`);
    }
    const waitMs = backoffMs(n, result.retryAfterMs, policy);
    onRetry({ retry: n, waitMs, error });
    await sleep(waitMs);
  }
}
