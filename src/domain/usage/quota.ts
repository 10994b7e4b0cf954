import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../db/pool.js';
import { monthOf } from '../plans/plans.js';
import { sql, type SqlFragment } from '../../db/sql.js';

/**
 * The monthly AI-call quota (DECISIONS §3), enforced in PostgreSQL so every process
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
  db: Queryable,
  clock: () => Date = () => new Date(),
  options: {
    /**
     * Where reservations are written: a pool whose commits do not wait for the WAL flush. A
     * reservation is a temporary hold — lost in a database crash, it is simply a hold that no
     * longer exists — while the AI call that counts is committed durably with the answer.
     */
    reserveDb?: Queryable;
  } = {},
): QuotaService {
  const reserveDb = options.reserveDb ?? db;
  async function settle(reservationId: string, count: number | undefined, asUsed: boolean): Promise<void> {
    const ctes = settleReservationCtes({
      reservation: sql`${reservationId}::uuid`,
      count: sql`${count ?? null}::int`,
      used: sql`CASE WHEN ${asUsed}::boolean THEN q_r.n ELSE 0 END`,
    });
    await db.query({ name: 'quota-settle', ...sql`WITH ${ctes} SELECT 1` });
  }

  async function refusal(workspaceId: string, month: string, limit: number): Promise<ReserveResult> {
    const cur = await db.query<{ used: number; reserved: number }>(
      `SELECT used, reserved FROM ai_call_quota WHERE workspace_id = $1 AND month = $2`,
      [workspaceId, month],
    );
    return { ok: false, used: cur.rows[0]?.used ?? 0, reserved: cur.rows[0]?.reserved ?? 0, limit };
  }

  return {
    async reserve(workspaceId, amount, limit, ttlMs = 10 * 60_000) {
      if (!Number.isInteger(amount) || amount <= 0)
        throw new Error('reservation amount must be a positive integer');
      const now = clock();
      const month = monthOf(now);
      const id = randomUUID();
      // One statement: create the month's counter or add to it, only while used + reserved
      // stays within the limit, and record the reservation.
      const res = await reserveDb.query({
        name: 'quota-reserve',
        text: `WITH upd AS (
           INSERT INTO ai_call_quota AS q (workspace_id, month, used, reserved)
           SELECT $1::uuid, $2::date, 0, $3::int WHERE $3::int <= $4::int
           ON CONFLICT (workspace_id, month) DO UPDATE SET reserved = q.reserved + EXCLUDED.reserved
            WHERE q.used + q.reserved + EXCLUDED.reserved <= $4::int
           RETURNING workspace_id
         )
         INSERT INTO quota_reservations (id, workspace_id, month, amount, expires_at)
         SELECT $5::uuid, $1::uuid, $2::date, $3::int, $6::timestamptz FROM upd RETURNING id`,
        values: [workspaceId, month, amount, limit, id, new Date(now.getTime() + ttlMs)],
      });
      if (res.rowCount === 1) return { ok: true, reservation: { id, workspaceId, month, amount } };
      return refusal(workspaceId, month, limit);
    },
    async reserveUpTo(workspaceId, { atMost, limit, spread, ttlMs }) {
      if (!Number.isInteger(atMost) || atMost <= 0 || !Number.isInteger(spread) || spread <= 0)
        throw new Error('atMost and spread must be positive integers');
      const now = clock();
      const month = monthOf(now);
      const id = randomUUID();
      // The counter row is locked first (when it exists), so the size is computed from the
      // latest count; the conditional upsert keeps used + reserved <= limit whatever happens.
      const res = await reserveDb.query<{ amount: number }>({
        name: 'quota-reserve-up-to',
        text: `WITH cur AS (
           SELECT used + reserved AS taken FROM ai_call_quota WHERE workspace_id = $1::uuid AND month = $2::date FOR UPDATE
         ), size AS (
           SELECT GREATEST(1, LEAST($3::int, ($4::int - COALESCE((SELECT taken FROM cur), 0)) / $5::int))::int AS n
         ), upd AS (
           INSERT INTO ai_call_quota AS q (workspace_id, month, used, reserved)
           SELECT $1::uuid, $2::date, 0, size.n FROM size WHERE size.n <= $4::int
           ON CONFLICT (workspace_id, month) DO UPDATE SET reserved = q.reserved + EXCLUDED.reserved
            WHERE q.used + q.reserved + EXCLUDED.reserved <= $4::int
           RETURNING workspace_id
         )
         INSERT INTO quota_reservations (id, workspace_id, month, amount, expires_at)
         SELECT $6::uuid, $1::uuid, $2::date, size.n, $7::timestamptz FROM upd, size RETURNING amount`,
        values: [workspaceId, month, atMost, limit, spread, id, new Date(now.getTime() + ttlMs)],
      });
      const amount = res.rows[0]?.amount;
      if (amount !== undefined) return { ok: true, reservation: { id, workspaceId, month, amount } };
      return refusal(workspaceId, month, limit);
    },
    commit: (id, count) => settle(id, count, true),
    release: (id, count) => settle(id, count, false),
    async usage(workspaceId) {
      const res = await db.query<{ used: number; reserved: number }>(
        `SELECT used, reserved FROM ai_call_quota WHERE workspace_id = $1 AND month = $2`,
        [workspaceId, monthOf(clock())],
      );
      return res.rows[0] ?? { used: 0, reserved: 0 };
    },
    async releaseExpired() {
      const res = await db.query<{ n: string }>(
        `WITH gone AS (
           DELETE FROM quota_reservations WHERE expires_at <= $1 RETURNING workspace_id, month, amount
         ), sums AS (
           SELECT workspace_id, month, sum(amount)::int AS amount FROM gone GROUP BY workspace_id, month
         ), upd AS (
           UPDATE ai_call_quota c SET reserved = c.reserved - s.amount FROM sums s
            WHERE c.workspace_id = s.workspace_id AND c.month = s.month RETURNING s.amount
         )
         SELECT COALESCE(sum(amount), 0)::text AS n FROM upd`,
        [clock()],
      );
      return Number(res.rows[0]?.n ?? 0);
    },
  };
}

/**
 * The CTEs that settle part of a reservation in one statement: shrink (or delete) the
 * reservation by `count` (SQL null: all of what is left, `q_r.n`) and move that amount out of
 * `reserved`, `used` of it into `used` (an expression over `q_r.n`: `q_r.n` for calls answered,
 * `0` for calls given back). Shared by `commit`/`release`, by the statement that stores a triage
 * answer (`record-triage.ts`), which counts its AI call in the same commit, and by the one that
 * finishes a batch (`batches.ts`). The arguments are SQL fragments (`sql` of db/sql.ts) whose
 * values travel with them; CTE names start with `q_`.
 */
export function settleReservationCtes(p: {
  reservation: SqlFragment;
  count: SqlFragment;
  used: SqlFragment;
}): SqlFragment {
  return sql`q_r AS (
      SELECT id, workspace_id, month, amount, LEAST(amount, COALESCE(${p.count}, amount)) AS n
        FROM quota_reservations WHERE id = ${p.reservation} FOR UPDATE
    ), q_del AS (
      DELETE FROM quota_reservations q USING q_r WHERE q.id = q_r.id AND q_r.n = q_r.amount
    ), q_shrink AS (
      UPDATE quota_reservations q SET amount = q.amount - q_r.n FROM q_r WHERE q.id = q_r.id AND q_r.n < q_r.amount
    ), q_counter AS (
      UPDATE ai_call_quota c
         SET reserved = c.reserved - q_r.n, used = c.used + ${p.used}
        FROM q_r WHERE c.workspace_id = q_r.workspace_id AND c.month = q_r.month
    )`;
}
