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
  left: number;
  retireAt: number;
  retired: boolean;
}

export function createAiCallLeases(quota: QuotaService, options: AiCallLeaseOptions): AiCallLeases {
  const { clock } = options;
  const leaseMs = options.leaseMs ?? 60_000;
  const ttlMs = options.ttlMs ?? 10 * 60_000;
  const spread = options.spread ?? 8;
  const size = options.size ?? leaseSize;
  if (!(leaseMs > 0 && ttlMs > leaseMs)) throw new Error('leaseMs must be positive and below ttlMs');

  const current = new Map<string, Lease>();
  const fetching = new Map<string, Promise<boolean>>();
  const releasing = new Set<Promise<unknown>>();

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
    if (current.get(lease.workspaceId) === lease) current.delete(lease.workspaceId);
    giveBackToMonth(lease, lease.left);
    lease.left = 0;
  }

  function usable(lease: Lease, limit: number, now: Date): boolean {
    return lease.month === monthOf(now) && lease.limit <= limit && now.getTime() < lease.retireAt;
  }

  async function fetchLease(workspaceId: string, limit: number): Promise<boolean> {
    const r = await quota.reserveUpTo(workspaceId, { atMost: size(limit), limit, spread, ttlMs });
    if (!r.ok) return false;
    const previous = current.get(workspaceId);
    if (previous) retire(previous);
    const { id, month, amount } = r.reservation;
    const lease = {
      id,
      workspaceId,
      month,
      limit,
      left: amount,
      retireAt: clock().getTime() + leaseMs,
      retired: false,
    };
    current.set(workspaceId, lease);
    return true;
  }

  return {
    async take(workspaceId, limit) {
      for (;;) {
        const lease = current.get(workspaceId);
        if (lease && !usable(lease, limit, clock())) retire(lease);
        else if (lease && lease.left > 0) {
          lease.left -= 1;
          return {
            reservationId: lease.id,
            giveBack: () => {
              if (lease.retired) giveBackToMonth(lease, 1);
              else lease.left += 1;
            },
            abandon: () => retire(lease),
          };
        }
        // One reservation at a time per workspace; the requests waiting on it share it.
        let pending = fetching.get(workspaceId);
        if (!pending) {
          pending = fetchLease(workspaceId, limit).finally(() => fetching.delete(workspaceId));
          fetching.set(workspaceId, pending);
        }
        if (!(await pending)) return null;
      }
    },

    async close() {
      for (const lease of [...current.values()]) retire(lease);
      await Promise.all(releasing);
    },
  };
}
