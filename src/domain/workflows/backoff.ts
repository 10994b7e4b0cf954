/**
 * When a delivery is tried again (docs/workflows.md#retries): exponential from `baseMs`, capped at `maxMs`,
 * plus up to 25 % jitter (only ever added, so the schedule's total is a lower bound), and never
 * sooner than the target's `Retry-After`. With the defaults, {@link DELIVERY_ATTEMPTS} attempts
 * span more than 24 hours: 30 s, 1 min, 2 min … 1 h, then hourly.
 */
export interface BackoffOptions {
  /** @defaultValue 30_000 */
  baseMs?: number;
  /** @defaultValue 3_600_000 */
  maxMs?: number;
  random?: () => number;
}

export const DELIVERY_ATTEMPTS = 32;

export function deliveryBackoffMs(
  attempt: number,
  retryAfterMs: number | undefined,
  o: BackoffOptions = {},
): number {
  const base = o.baseMs ?? 30_000;
  const max = o.maxMs ?? 3_600_000;
  const exp = Math.min(max, base * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
  const jittered = Math.round(exp * (1 + 0.25 * (o.random ?? Math.random)()));
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, 24 * 3_600_000));
}

/** The shortest total wait over `attempts` attempts (no jitter, no Retry-After). */
export function minimumScheduleMs(attempts: number, o: BackoffOptions = {}): number {
  let total = 0;
  for (let n = 1; n < attempts; n++) total += deliveryBackoffMs(n, undefined, { ...o, random: () => 0 });
  return total;
}
