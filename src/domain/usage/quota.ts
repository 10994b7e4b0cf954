import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/pool.js';
import { monthOf } from '../plans/plans.js';
import {
  findQuotaCounter,
  insertReservation,
  insertReservationUpTo,
  releaseExpiredReservations,
  settleReservation,
} from './quota-store.js';

/**
 * The monthly AI-call quota (docs/api.md#plans-and-quotas), enforced in PostgreSQL so every process
 * shares one count. A caller reserves before calling a model, then commits what was
 * used and releases the rest. Invariant: `used + reserved <= limit` at every moment,
 * kept by a single conditional UPDATE (row lock + re-check under READ COMMITTED).
 * Reservations a crashed process never settled are released when they expire.
 */
export interface Reservation {
  id: string;
  workspaceId: string;
  month: string;
  amount: number;
}

export type ReserveResult =
  { ok: true; reservation: Reservation } | { ok: false; used: number; reserved: number; limit: number };

export interface QuotaService {
  reserve(workspaceId: string, amount: number, limit: number, ttlMs?: number): Promise<ReserveResult>;
  /**
   * Reserves between 1 and `atMost` calls: `atMost` while the month has room to spare, fewer
   * near the limit (at most a `spread`th of what is left, and at least 1), so several holders
   * of such reservations leave each other room. Refused only when not even one call is left.
   */
  reserveUpTo(
    workspaceId: string,
    opts: { atMost: number; limit: number; spread: number; ttlMs: number },
  ): Promise<ReserveResult>;
  /** Counts `count` of the reservation as used (default: all of what is left of it). */
  commit(reservationId: string, count?: number): Promise<void>;
  /** Gives `count` of the reservation back (default: all of what is left of it). */
  release(reservationId: string, count?: number): Promise<void>;
  usage(workspaceId: string): Promise<{ used: number; reserved: number }>;
  /** Releases reservations past their expiry; returns how many calls were given back. */
  releaseExpired(): Promise<number>;
}

export function createQuotaService(
  db: Db,
  clock: () => Date = () => new Date(),
  options: {
    /**
     * Where reservations are written: a pool whose commits do not wait for the WAL flush. A
     * reservation is a temporary hold — lost in a database crash, it is simply a hold that no
     * longer exists — while the AI call that counts is committed durably with the answer.
     */
    reserveDb?: Db;
  } = {},
): QuotaService {
  const reserveDb = options.reserveDb ?? db;

  async function refusal(workspaceId: string, month: string, limit: number): Promise<ReserveResult> {
    const cur = await findQuotaCounter(db, workspaceId, month);
    return { ok: false, used: cur?.used ?? 0, reserved: cur?.reserved ?? 0, limit };
  }

  return {
    async reserve(workspaceId, amount, limit, ttlMs = 10 * 60_000) {
      if (!Number.isInteger(amount) || amount <= 0)
        throw new Error('reservation amount must be a positive integer');
      const now = clock();
      const month = monthOf(now);
      const id = randomUUID();
      const expiresAt = new Date(now.getTime() + ttlMs);
      if (
        await insertReservation(reserveDb, {
          reservationId: id,
          workspaceId,
          month,
          amount,
          limit,
          expiresAt,
        })
      )
        return { ok: true, reservation: { id, workspaceId, month, amount } };
      return refusal(workspaceId, month, limit);
    },
    async reserveUpTo(workspaceId, { atMost, limit, spread, ttlMs }) {
      if (!Number.isInteger(atMost) || atMost <= 0 || !Number.isInteger(spread) || spread <= 0)
        throw new Error('atMost and spread must be positive integers');
      const now = clock();
      const month = monthOf(now);
      const id = randomUUID();
      const expiresAt = new Date(now.getTime() + ttlMs);
      const amount = await insertReservationUpTo(reserveDb, {
        reservationId: id,
        workspaceId,
        month,
        atMost,
        limit,
        spread,
        expiresAt,
      });
      if (amount !== null) return { ok: true, reservation: { id, workspaceId, month, amount } };
      return refusal(workspaceId, month, limit);
    },
    commit: (id, count) => settleReservation(db, id, count ?? null, true),
    release: (id, count) => settleReservation(db, id, count ?? null, false),
    async usage(workspaceId) {
      return (await findQuotaCounter(db, workspaceId, monthOf(clock()))) ?? { used: 0, reserved: 0 };
    },
    releaseExpired: () => releaseExpiredReservations(db, clock()),
  };
}
