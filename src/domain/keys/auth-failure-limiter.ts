/**
 * Failed authentications per client address, counted in this process. A key that passes the
 * checksum but matches no row costs a database lookup; past `limit` such failures in a window,
 * the client's lookups are paced (`overLimitPerSecond`, with a burst of one second's worth)
 * rather than stopped: a guesser is slowed to that rate, while a valid key from the same address
 * (behind NAT or a CI provider's shared egress, next to a misconfigured job) is still looked up
 * and accepted. Only a lookup the pace has no room for is refused (429 with the time until it
 * has). Keys this process already verified never need a lookup, and a key that matches a row
 * (revoked or expired included) is no guess: only keys that match nothing count
 * (docs/api.md#keys).
 *
 * In-process on purpose: it must cost less than the lookup it saves, and no shared store
 * (Redis may be down). With P web processes the lookups a client can force are at most
 * P × (`limit` a window + `overLimitPerSecond` a second).
 */
export interface AuthFailureLimiter {
  /**
   * Whether `client` may cause a lookup now: 0 when it may (taking one of the paced lookups
   * when it is past its limit), else the milliseconds until it may.
   */
  admitLookup(client: string): number;
  recordFailure(client: string): void;
}

interface Window {
  start: number;
  failures: number;
  /** Paced lookups left once past the limit, refilled at `overLimitPerSecond`. */
  tokens: number;
  refilledAt: number;
}

export function createAuthFailureLimiter(options: {
  /** Failures allowed per client per window before its lookups are paced. */
  limit: number;
  /** @defaultValue 60,000 */
  windowMs?: number;
  /** Lookups a second a client past its limit may still cause. @defaultValue max(1, limit / 6) */
  overLimitPerSecond?: number;
  /** Clients tracked at once; the oldest is dropped past it. @defaultValue 100,000 */
  maxClients?: number;
  now?: () => number;
}): AuthFailureLimiter {
  const windowMs = options.windowMs ?? 60_000;
  const rate = options.overLimitPerSecond ?? Math.max(1, options.limit / 6);
  const burst = Math.max(1, rate);
  const maxClients = options.maxClients ?? 100_000;
  const now = options.now ?? Date.now;
  const windows = new Map<string, Window>();

  function current(client: string, t: number): Window | undefined {
    const w = windows.get(client);
    if (w && t - w.start >= windowMs) {
      windows.delete(client);
      return undefined;
    }
    return w;
  }

  return {
    admitLookup(client) {
      const t = now();
      const w = current(client, t);
      if (!w || w.failures < options.limit) return 0;
      w.tokens = Math.min(burst, w.tokens + ((t - w.refilledAt) / 1000) * rate);
      w.refilledAt = t;
      if (w.tokens >= 1) {
        w.tokens -= 1;
        return 0;
      }
      return Math.min(w.start + windowMs - t, Math.ceil(((1 - w.tokens) / rate) * 1000));
    },
    recordFailure(client) {
      const t = now();
      const w = current(client, t);
      if (w) {
        w.failures++;
        return;
      }
      if (windows.size >= maxClients) windows.delete(windows.keys().next().value as string);
      windows.set(client, { start: t, failures: 1, tokens: burst, refilledAt: t });
    },
  };
}
