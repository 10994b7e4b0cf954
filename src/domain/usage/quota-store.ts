import type { Db } from '../../db/pool.js';
import { sql, type SqlFragment } from '../../db/sql.js';

/**
 * The monthly AI-call quota's tables: `ai_call_quota` (one counter per workspace and month) and
 * `quota_reservations` (the holds on it); quota.ts holds the invariants and the service over
 * these. Two statements of other areas write these tables in their own commit, through
 * fragments built here (`{ text, values }`, never spliced strings): the triage answer statements
 * (`takeOneCall`, `takeCallsPerMonth`, `settleReservationCtes`, `settleReservationsCtes`) and
 * the one that finishes a batch (`settleReservationCtes`).
 */

/** A workspace's counter for one month; zeros when the month has no row yet. */
export interface QuotaCounter {
  used: number;
  reserved: number;
}

/** What a reservation statement writes: the hold and when a sweep may give it back. */
export interface ReservationInput {
  reservationId: string;
  workspaceId: string;
  /** The month's first day, `YYYY-MM-DD`. */
  month: string;
  limit: number;
  expiresAt: Date;
}

/**
 * Adds `amount` to the month's `reserved` and records the reservation, in one statement, only
 * while `used + reserved` stays within `limit`. False when refused.
 */
export async function insertReservation(db: Db, r: ReservationInput & { amount: number }): Promise<boolean> {
  const res = await db.query({
    name: 'quota-reserve',
    ...sql`WITH upd AS (
       INSERT INTO ai_call_quota AS q (workspace_id, month, used, reserved)
       SELECT ${r.workspaceId}::uuid, ${r.month}::date, 0, ${r.amount}::int WHERE ${r.amount}::int <= ${r.limit}::int
       ON CONFLICT (workspace_id, month) DO UPDATE SET reserved = q.reserved + EXCLUDED.reserved
        WHERE q.used + q.reserved + EXCLUDED.reserved <= ${r.limit}::int
       RETURNING workspace_id
     )
     INSERT INTO quota_reservations (id, workspace_id, month, amount, expires_at)
     SELECT ${r.reservationId}::uuid, ${r.workspaceId}::uuid, ${r.month}::date, ${r.amount}::int, ${r.expiresAt}::timestamptz
       FROM upd RETURNING id`,
  });
  return res.rowCount === 1;
}

/**
 * Reserves between 1 and `atMost` calls (at most a `spread`th of what is left), in one
 * statement: the counter row is locked first (when it exists), so the size is computed from the
 * latest count, and the conditional upsert keeps `used + reserved <= limit` whatever happens.
 * The amount reserved, or null when refused.
 */
export async function insertReservationUpTo(
  db: Db,
  r: ReservationInput & { atMost: number; spread: number },
): Promise<number | null> {
  const res = await db.query<{ amount: number }>({
    name: 'quota-reserve-up-to',
    ...sql`WITH cur AS (
       SELECT used + reserved AS taken FROM ai_call_quota
        WHERE workspace_id = ${r.workspaceId}::uuid AND month = ${r.month}::date FOR UPDATE
     ), size AS (
       SELECT GREATEST(1, LEAST(${r.atMost}::int, (${r.limit}::int - COALESCE((SELECT taken FROM cur), 0)) / ${r.spread}::int))::int AS n
     ), upd AS (
       INSERT INTO ai_call_quota AS q (workspace_id, month, used, reserved)
       SELECT ${r.workspaceId}::uuid, ${r.month}::date, 0, size.n FROM size WHERE size.n <= ${r.limit}::int
       ON CONFLICT (workspace_id, month) DO UPDATE SET reserved = q.reserved + EXCLUDED.reserved
        WHERE q.used + q.reserved + EXCLUDED.reserved <= ${r.limit}::int
       RETURNING workspace_id
     )
     INSERT INTO quota_reservations (id, workspace_id, month, amount, expires_at)
     SELECT ${r.reservationId}::uuid, ${r.workspaceId}::uuid, ${r.month}::date, size.n, ${r.expiresAt}::timestamptz
       FROM upd, size RETURNING amount`,
  });
  return res.rows[0]?.amount ?? null;
}

/** The month's counter of a workspace, or null when it has none yet. */
export async function findQuotaCounter(
  db: Db,
  workspaceId: string,
  month: string,
): Promise<QuotaCounter | null> {
  const res = await db.query<QuotaCounter>(
    sql`SELECT used, reserved FROM ai_call_quota WHERE workspace_id = ${workspaceId} AND month = ${month}`,
  );
  return res.rows[0] ?? null;
}

/**
 * Settles `count` of a reservation (null: all of what is left): counted as used when `asUsed`,
 * given back otherwise (`settleReservationCtes`).
 */
export async function settleReservation(
  db: Db,
  reservationId: string,
  count: number | null,
  asUsed: boolean,
): Promise<void> {
  const ctes = settleReservationCtes({
    reservation: sql`${reservationId}::uuid`,
    count: sql`${count}::int`,
    used: sql`CASE WHEN ${asUsed}::boolean THEN q_r.n ELSE 0 END`,
  });
  await db.query({ name: 'quota-settle', ...sql`WITH ${ctes} SELECT 1` });
}

/** Deletes the reservations expired at `now` and gives their calls back; how many calls. */
export async function releaseExpiredReservations(db: Db, now: Date): Promise<number> {
  const res = await db.query<{ n: string }>(sql`
    WITH gone AS (
      DELETE FROM quota_reservations WHERE expires_at <= ${now} RETURNING workspace_id, month, amount
    ), sums AS (
      SELECT workspace_id, month, sum(amount)::int AS amount FROM gone GROUP BY workspace_id, month
    ), upd AS (
      UPDATE ai_call_quota c SET reserved = c.reserved - s.amount FROM sums s
       WHERE c.workspace_id = s.workspace_id AND c.month = s.month RETURNING s.amount
    )
    SELECT COALESCE(sum(amount), 0)::text AS n FROM upd`);
  return Number(res.rows[0]?.n ?? 0);
}

/**
 * The CTEs that settle part of a reservation in one statement: shrink (or delete) the
 * reservation by `count` (SQL null: all of what is left, `q_r.n`) and move that amount out of
 * `reserved`, `used` of it into `used` (an expression over `q_r.n`: `q_r.n` for calls answered,
 * `0` for calls given back). Shared by {@link settleReservation}, by the statement that stores a
 * triage answer (`triage-store.ts`), which counts its AI call in the same commit, and by the one
 * that finishes a batch (`batch-store.ts`). The arguments are SQL fragments whose values travel with
 * them; CTE names start with `q_`.
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

/**
 * A data-modifying CTE body that takes one AI call straight from the month's counter (no
 * reservation), only while `used + reserved + 1 <= limit`; it returns one row when the call was
 * taken. `limit` is an SQL fragment of type int; SQL null takes nothing. For the statement that
 * stores a triage answer and counts its call in the same commit (`triage-store.ts`).
 */
export function takeOneCall(p: {
  workspaceId: string;
  month: string | null;
  limit: SqlFragment;
}): SqlFragment {
  return sql`INSERT INTO ai_call_quota AS q (workspace_id, month, used, reserved)
  SELECT ${p.workspaceId}::uuid, ${p.month}::date, 1, 0 WHERE ${p.limit} IS NOT NULL AND 1 <= ${p.limit}
  ON CONFLICT (workspace_id, month) DO UPDATE SET used = q.used + 1
   WHERE q.used + q.reserved + 1 <= ${p.limit}
  RETURNING 1`;
}

/**
 * A data-modifying CTE body that takes AI calls straight from the months' counters for a group
 * of answers stored together: `groups` names a relation of `(workspace_id, month, lim, n)`, one
 * row per workspace and month. Each month's `n` calls are taken all together, only while
 * `used + reserved + n <= lim`, or not at all; it returns `(workspace_id, month)` for each month
 * taken. Months are locked in workspace order (`triage-store.ts`, `recordTriages`).
 */
export function takeCallsPerMonth(groups: SqlFragment): SqlFragment {
  return sql`INSERT INTO ai_call_quota AS q (workspace_id, month, used, reserved)
  SELECT workspace_id, month, n, 0 FROM ${groups} WHERE n <= lim ORDER BY workspace_id, month
  ON CONFLICT (workspace_id, month) DO UPDATE SET used = q.used + EXCLUDED.used
   WHERE q.used + q.reserved + EXCLUDED.used
         <= (SELECT g.lim FROM ${groups} g WHERE g.workspace_id = q.workspace_id AND g.month = q.month)
  RETURNING q.workspace_id, q.month`;
}

/**
 * The CTEs that settle, in one statement, part of each of several reservations, every call
 * settled as used: `counts` is a relation of `(id uuid, n int)` rows, one per reservation, and
 * each reservation shrinks by `n` (or is deleted when that is all it holds) with its month's
 * `reserved` moved to `used` once per month — the group commit of single answers
 * (`triage-store.ts`), whose answers may share a lease's reservation. CTE names start with `q_`.
 */
export function settleReservationsCtes(counts: SqlFragment): SqlFragment {
  return sql`q_r AS (
      SELECT r.id, r.workspace_id, r.month, r.amount, LEAST(r.amount, c.n) AS n
        FROM quota_reservations r JOIN (${counts}) AS c(id, n) ON r.id = c.id
       ORDER BY r.id FOR UPDATE OF r
    ), q_del AS (
      DELETE FROM quota_reservations q USING q_r WHERE q.id = q_r.id AND q_r.n = q_r.amount
    ), q_shrink AS (
      UPDATE quota_reservations q SET amount = q.amount - q_r.n FROM q_r WHERE q.id = q_r.id AND q_r.n < q_r.amount
    ), q_counter AS (
      UPDATE ai_call_quota c SET reserved = c.reserved - s.n, used = c.used + s.n
        FROM (SELECT workspace_id, month, sum(n)::int AS n FROM q_r GROUP BY workspace_id, month) s
       WHERE c.workspace_id = s.workspace_id AND c.month = s.month
    )`;
}
