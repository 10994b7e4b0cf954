/**
 * Failed authentications per client address, counted in this process (docs/operations.md#failure-behaviour). A key
 * that passes the checksum but matches no row costs a database lookup; past `limit` such
 * failures in a window, the client's unknown keys are refused without one (429 with the
 * time left in the window), while keys this process already verified keep working, so a
 * legitimate client behind the same address is not locked out by a neighbour's flood.
 *
 * In-process on purpose: it must cost less than the lookup it saves, and no shared store
 * (Redis may be down, docs/operations.md#failure-behaviour). With P web processes the lookups a client can force are
 * at most P × `limit` a window.
 */
export interface AuthFailureLimiter {
  /** Milliseconds until `client` may cause lookups again; 0 when it may now. */
  blockedForMs(client: string): number;
  recordFailure(client: string): void;
}

interface Window {
  start: number;
  failures: number;
}

export function createAuthFailureLimiter(options: {
  /** Failures allowed per client per window. */
  limit: number;
  /** @defaultValue 60,000 */
  windowMs?: number;
  /** Clients tracked at once; the oldest is dropped past it. @defaultValue 100,000 */
  maxClients?: number;
  now?: () => number;
}): AuthFailureLimiter {
  const windowMs = options.windowMs ?? 60_000;
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
    blockedForMs(client) {
      const t = now();
      const w = current(client, t);
      return w && w.failures >= options.limit ? w.start + windowMs - t : 0;
    },
    recordFailure(client) {
      const t = now();
      const w = current(client, t);
      if (w) {
        w.failures++;
        return;
      }
      if (windows.size >= maxClients) windows.delete(windows.keys().next().value as string);
      windows.set(client, { start: t, failures: 1 });
    },
  };
}
