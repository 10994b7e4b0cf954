import { AppError } from './errors.js';

/**
 * A step on a shared dependency (Redis, the queue backend) that must not hold a request
 * for long when that dependency is down (docs/operations.md#failure-behaviour): past `ms`, or on any failure, it
 * becomes 503 `overloaded` with `Retry-After`, the answer a client can act on. The step
 * itself is not cancelled; callers use it only before anything is committed.
 */
export async function withDeadline<T>(
  step: Promise<T> | (() => Promise<T>),
  ms: number,
  what: string,
  retryAfterSeconds = 5,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const overloaded = (cause?: unknown) =>
    new AppError('overloaded', `The service cannot reach its ${what} right now; retry shortly.`, {
      headers: { 'Retry-After': String(retryAfterSeconds) },
      cause,
    });
  try {
    return await Promise.race([
      typeof step === 'function' ? step() : step,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(overloaded(new Error(`${what}: no answer in ${ms} ms`))), ms);
      }),
    ]);
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw overloaded(err);
  } finally {
    clearTimeout(timer);
  }
}

/** How long a request waits on Redis for a rate-limit window or a similar small step. */
export const REDIS_STEP_DEADLINE_MS = 1_000;
/** How long `/readyz` waits on each dependency. */
export const READINESS_DEADLINE_MS = 2_000;
