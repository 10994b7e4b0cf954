import { randomUUID } from 'node:crypto';
import type { Pool } from '../../db/pool.js';
import { releaseCaseLease, renewCaseLease, takeCaseLease } from './case-lease-store.js';

/**
 * One attempt at a time per (workflow, case), without a database connection held across the
 * remote calls (m019). Invariants:
 * - the lease is committed before the first remote call and renewed (fenced by `holder`) before
 *   each later one, so two attempts never call the target for one case at once while both are
 *   alive; a holder that lost its lease makes no further call;
 * - `LEASE_TTL_MS` is far longer than one call (a 10 s timeout plus at most `RATE_WAIT_MS` waiting
 *   for a rate-limit slot), so a live holder renewing before each call never runs out; a crashed
 *   holder's lease is taken over once it has run out;
 * - each statement takes a pooled connection and gives it back at once;
 * - `keep()` renews only once a quarter of the TTL has passed since the lease was last taken or
 *   renewed (timed from before that statement was sent): until then the lease cannot have run
 *   out, so it is still ours, and a renewal would only cost a round trip.
 */

/** How long a lease lasts after it was taken or renewed. */
export const LEASE_TTL_MS = 120_000;
/** Longest an attempt waits in process for a busy case before its job is delayed instead. */
export const LEASE_WAIT_MS = 1_000;
/** Bounds of the delay of a job whose case stayed busy. */
const BUSY_DELAY_MIN_MS = 250;
const BUSY_DELAY_MAX_MS = 5_000;

export interface CaseLease {
  /** Renews the lease before a remote call; false when it is no longer ours (make no call). */
  keep(): Promise<boolean>;
}

export type Leased<T> = { held: true; value: T } | { held: false; retryAfterMs: number };

export interface CaseLeaseOptions {
  /** @defaultValue {@link LEASE_TTL_MS} */
  ttlMs?: number;
  /** @defaultValue {@link LEASE_WAIT_MS} */
  waitMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `fn` holding the lease on (workflow, case), given back when `fn` ends (a failure to give
 * it back only lets it run out). When another attempt holds it for longer than `waitMs`, answers
 * `held: false` with when to come back (the job is delayed; no attempt spent).
 */
export async function withCaseLease<T>(
  pool: Pool,
  workflowId: string,
  caseId: string,
  fn: (lease: CaseLease) => Promise<T>,
  options: CaseLeaseOptions = {},
): Promise<Leased<T>> {
  const ttlMs = options.ttlMs ?? LEASE_TTL_MS;
  const deadline = Date.now() + (options.waitMs ?? LEASE_WAIT_MS);
  const holder = randomUUID();
  let pause = 10;
  let takenAt = 0;
  for (;;) {
    takenAt = Date.now();
    const busyUntil = await takeCaseLease(pool, workflowId, caseId, holder, ttlMs);
    if (busyUntil === null) break;
    if (Date.now() >= deadline) {
      const ms = busyUntil.getTime() - Date.now();
      return {
        held: false,
        retryAfterMs: Math.min(BUSY_DELAY_MAX_MS, Math.max(BUSY_DELAY_MIN_MS, ms)),
      };
    }
    await sleep(Math.min(pause, Math.max(1, deadline - Date.now())));
    pause = Math.min(pause * 2, 200);
  }
  // `sentAt` of the take that succeeded: the lease lasts at least `ttlMs` from then.
  let validFrom = takenAt;
  const keep = async () => {
    const now = Date.now();
    if (now - validFrom < ttlMs / 4) return true;
    const kept = await renewCaseLease(pool, workflowId, caseId, holder, ttlMs);
    if (kept) validFrom = now;
    return kept;
  };
  try {
    return { held: true, value: await fn({ keep }) };
  } finally {
    await releaseCaseLease(pool, workflowId, caseId, holder).catch(() => undefined);
  }
}
