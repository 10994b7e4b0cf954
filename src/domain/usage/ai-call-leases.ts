import { monthOf } from '../plans/plans.js';
import type { QuotaService } from './quota.js';

/**
 * AI calls for single requests to a provider outside the process, which must be held before
 * the provider is paid (docs/triage.md#billing). Reserving one call per request costs a round trip to
 * PostgreSQL before every provider call; a lease reserves a few calls at once for this process
 * and hands them out locally. What stays exact:
 * - a call counts as used only in the statement that stores its answer (which settles one
 *   call of the lease), so `used` and the ledger agree call for call;
 * - `used + reserved <= limit` at every moment: a lease is an ordinary reservation;
 * - a call handed out but not answered goes back to the lease; the calls a lease did not hand
 *   out go back to the month when it retires (after `leaseMs`, at the month's end, when the
 *   plan's limit falls, at `close()`), or when its reservation expires if the process died.
 * The price: while a process holds calls it has not handed out, other processes see that much
 * less room, so near the limit one may refuse a call another could still have given. Leases
 * shrink as the month fills (a `spread`th of what is left at most), and a plan under 2,000
 * calls a month leases one call at a time, which is exactly a reservation per request.
 *
 * A lease of 4 calls or more reserves the next one ahead of need, so no request waits for that
 * reservation's round trip: when what is left of it would last less than twice the time a
 * reservation takes, at the pace the previous lease was handed out (`refillAt`), and at the
 * latest when its last quarter is being handed out. The next lease is handed out only once the
 * current one is spent; a process holds at most one lease ahead (a quarter of one when requests
 * are sparse).
 */
export interface LeasedCall {
  /** The reservation the answer's statement settles one call of. */
  reservationId: string;
  /** The request got no answer: the call was not counted and goes back. */
  giveBack(): void;
  /**
   * Storing the answer failed, so whether its statement counted the call is unknown. The lease
   * retires: its calls not handed out go back, and this one stays held until the reservation
   * expires, if it was not counted. Never counted twice, never handed out twice.
   */
  abandon(): void;
}

export interface AiCallLeases {
  /** One AI call of the workspace's month, or null when the month's limit leaves none. */
  take(workspaceId: string, limit: number): Promise<LeasedCall | null>;
  /** Gives every call not handed out back to its month. */
  close(): Promise<void>;
}

export interface AiCallLeaseOptions {
  clock: () => Date;
  /** Longest a lease hands out calls. @defaultValue 60 s */
  leaseMs?: number;
  /** Expiry of a lease's reservation: the backstop for a process that died. @defaultValue 10 min */
  ttlMs?: number;
  /** A lease takes at most this share of what is left of the month. @defaultValue 8 (an eighth) */
  spread?: number;
  /** Calls a lease asks for under a plan's monthly limit. @defaultValue {@link leaseSize} */
  size?: (limit: number) => number;
  /** Milliseconds on a monotonic clock, for the pace and the reservations' times. @defaultValue performance.now */
  now?: () => number;
  /** Calls left in a lease that start the next reservation. @defaultValue {@link refillAt} */
  refillAt?: (size: number, callsPerMs: number, reserveMs: number) => number;
}

/** One call per 2,000 of the monthly limit, between 1 and `max`: 25 for 50,000 calls a month. */
export function leaseSize(limit: number, max = 25): number {
  return Math.max(1, Math.min(max, Math.floor(limit / 2000)));
}

interface Lease {
  id: string;
  workspaceId: string;
  month: string;
  limit: number;
  /** Calls reserved for it. */
  size: number;
  left: number;
  retireAt: number;
  retired: boolean;
  /** When it began handing out calls (`now()`), for the pace of the next one. */
  since: number;
}

/**
 * How many calls left in a lease of `size` should start the next reservation: enough to last
 * twice the time a reservation takes at `callsPerMs`, a quarter of the lease at least, the whole
 * lease at most (docs/triage.md#billing). Under 4 calls, none: the lease is spent first.
 */
export function refillAt(size: number, callsPerMs: number, reserveMs: number): number {
  if (size < 4) return 0;
  const lead = callsPerMs > 0 && reserveMs > 0 ? Math.ceil(2 * callsPerMs * reserveMs) : 0;
  return Math.min(size, Math.max(Math.floor(size / 4), lead));
}

export function createAiCallLeases(quota: QuotaService, options: AiCallLeaseOptions): AiCallLeases {
  const { clock } = options;
  const leaseMs = options.leaseMs ?? 60_000;
  const ttlMs = options.ttlMs ?? 10 * 60_000;
  const spread = options.spread ?? 8;
  const size = options.size ?? leaseSize;
  const refillWhen = options.refillAt ?? refillAt;
  const now = options.now ?? (() => performance.now());
  if (!(leaseMs > 0 && ttlMs > leaseMs)) throw new Error('leaseMs must be positive and below ttlMs');

  const current = new Map<string, Lease>();
  /** Reserved ahead of need while the current lease hands out its last calls (`refillAt`). */
  const next = new Map<string, Lease>();
  const fetching = new Map<string, Promise<boolean>>();
  const releasing = new Set<Promise<unknown>>();
  /** Per workspace: calls a ms its last lease was handed out at, from first call to last. */
  const pace = new Map<string, number>();
  /** How long a reservation takes here (ms), smoothed over the recent ones. */
  let reserveMs = 0;

  /** The pace a spent lease was handed out at, for the lead of the next one. */
  function notePace(lease: Lease): void {
    const ms = now() - lease.since;
    pace.set(lease.workspaceId, ms > 0 ? lease.size / ms : Number.POSITIVE_INFINITY);
  }

  function begin(lease: Lease): void {
    lease.since = now();
    current.set(lease.workspaceId, lease);
  }

  function giveBackToMonth(lease: Lease, calls: number): void {
    if (calls <= 0) return;
    // A release that fails leaves the calls held until the reservation expires.
    const p = quota.release(lease.id, calls).catch(() => undefined);
    releasing.add(p);
    void p.finally(() => releasing.delete(p));
  }

  function retire(lease: Lease): void {
    if (lease.retired) return;
    lease.retired = true;
    // Retired before it was spent (its time, the month, the limit, close): sparse or changing
    // traffic, so the next lease starts from the quarter rule (and the map stays small).
    if (lease.left > 0 && current.get(lease.workspaceId) === lease) pace.delete(lease.workspaceId);
    if (current.get(lease.workspaceId) === lease) current.delete(lease.workspaceId);
    if (next.get(lease.workspaceId) === lease) next.delete(lease.workspaceId);
    giveBackToMonth(lease, lease.left);
    lease.left = 0;
  }

  function usable(lease: Lease, limit: number, now: Date): boolean {
    return lease.month === monthOf(now) && lease.limit <= limit && now.getTime() < lease.retireAt;
  }

  /** Reserves a lease: the current one if that is spent or unusable, else the next one. */
  async function fetchLease(workspaceId: string, limit: number): Promise<boolean> {
    const started = now();
    const r = await quota.reserveUpTo(workspaceId, { atMost: size(limit), limit, spread, ttlMs });
    const took = now() - started;
    reserveMs = reserveMs === 0 ? took : (reserveMs + took) / 2;
    if (!r.ok) return false;
    const { id, month, amount } = r.reservation;
    const lease = {
      id,
      workspaceId,
      month,
      limit,
      size: amount,
      left: amount,
      retireAt: clock().getTime() + leaseMs,
      retired: false,
      since: 0,
    };
    const previous = current.get(workspaceId);
    if (previous && previous.left > 0 && usable(previous, limit, clock())) {
      const queued = next.get(workspaceId);
      if (queued) retire(queued);
      next.set(workspaceId, lease);
    } else {
      if (previous) retire(previous);
      begin(lease);
    }
    return true;
  }

  /** One reservation at a time per workspace; the requests waiting on it share it. */
  function startFetch(workspaceId: string, limit: number): Promise<boolean> {
    const pending = fetchLease(workspaceId, limit).finally(() => fetching.delete(workspaceId));
    fetching.set(workspaceId, pending);
    return pending;
  }

  /** Whether handing out a call of `lease` should reserve the next lease now. */
  function refillDue(lease: Lease): boolean {
    return (
      lease.size >= 4 &&
      lease.left <= refillWhen(lease.size, pace.get(lease.workspaceId) ?? 0, reserveMs) &&
      !next.has(lease.workspaceId) &&
      !fetching.has(lease.workspaceId)
    );
  }

  return {
    async take(workspaceId, limit) {
      for (;;) {
        const lease = current.get(workspaceId);
        if (lease && !usable(lease, limit, clock())) {
          retire(lease);
          continue;
        }
        if (lease && lease.left > 0) {
          lease.left -= 1;
          if (lease.left === 0) notePace(lease);
          if (refillDue(lease)) {
            // Ahead of need: a failure here is met again by the request that finds the lease spent.
            void startFetch(workspaceId, limit).catch(() => undefined);
          }
          return {
            reservationId: lease.id,
            giveBack: () => {
              if (lease.retired) giveBackToMonth(lease, 1);
              else lease.left += 1;
            },
            abandon: () => retire(lease),
          };
        }
        const queued = next.get(workspaceId);
        if (queued) {
          if (lease) retire(lease); // spent: nothing to give back
          next.delete(workspaceId);
          if (usable(queued, limit, clock())) begin(queued);
          else retire(queued);
          continue;
        }
        const pending = fetching.get(workspaceId) ?? startFetch(workspaceId, limit);
        if (!(await pending)) return null;
      }
    },

    async close() {
      // A reservation in flight lands first, so its calls go back with the rest.
      await Promise.allSettled([...fetching.values()]);
      for (const lease of [...current.values(), ...next.values()]) retire(lease);
      await Promise.all(releasing);
    },
  };
}
