import type { Db } from '../../db/pool.js';
import { sql, type SqlFragment } from '../../db/sql.js';

/**
 * The usage area's store: functions of `(db, …)` (the pool or a transaction client) that speak
 * camelCase, and the one module naming the area's tables: `key_request_counters`,
 * `rate_limit_windows`, `usage_ledger`, `ai_call_quota` and `quota_reservations`.
 *
 * Two statements of other areas write these tables in their own commit, through fragments
 * built here (`{ text, values }`, never spliced strings): the triage answer statements
 * (`takeOneCall`, `insertLedgerRowsFrom`, `settleReservationCtes`) and the one that finishes a
 * batch (`settleReservationCtes`).
 * `api_keys.last_used_at` is written here (the meter owns that column, DECISIONS §5) and the
 * per-key totals read `api_keys` for the workspace's key ids.
 */

/** Requests of one key on one UTC day (`day` is `YYYY-MM-DD`). */
export interface KeyDayCount {
  keyId: string;
  workspaceId: string;
  day: string;
  requests: number;
}

/** When a key was last seen: the later of this and the stored value is kept. */
export interface KeyLastUse {
  keyId: string;
  at: Date;
}

/**
 * Adds request counts per key and day and advances the keys' `last_used_at`, in one statement
 * so a flush is all or nothing. `api_keys.last_used_at` belongs to the keys area; the meter
 * owns this one column's writes (DECISIONS §5: no write per request).
 */
export async function addKeyRequests(
  db: Db,
  counts: readonly KeyDayCount[],
  lastUses: readonly KeyLastUse[],
): Promise<void> {
  if (counts.length === 0 && lastUses.length === 0) return;
  await db.query(sql`
    WITH counts AS (
      INSERT INTO key_request_counters (key_id, workspace_id, day, requests)
      SELECT * FROM unnest(${counts.map((c) => c.keyId)}::uuid[], ${counts.map((c) => c.workspaceId)}::uuid[],
                           ${counts.map((c) => c.day)}::date[], ${counts.map((c) => c.requests)}::bigint[])
      ON CONFLICT (key_id, day) DO UPDATE SET requests = key_request_counters.requests + EXCLUDED.requests
      RETURNING 1
    )
    UPDATE api_keys k SET last_used_at = GREATEST(k.last_used_at, u.at)
      FROM unnest(${lastUses.map((u) => u.keyId)}::uuid[], ${lastUses.map((u) => u.at)}::timestamptz[]) AS u(id, at)
     WHERE k.id = u.id`);
}

/** Adds `n` hits to a rate-limit window and returns the window's new total. */
export async function addWindowHits(db: Db, bucket: string, windowStart: Date, n: number): Promise<number> {
  const { rows } = await db.query<{ hits: number }>(sql`
    INSERT INTO rate_limit_windows (bucket, window_start, hits) VALUES (${bucket}, ${windowStart}, ${n})
    ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_limit_windows.hits + EXCLUDED.hits
    RETURNING hits`);
  return rows[0]?.hits ?? n;
}

/** Deletes the rate-limit windows that started before `before`. */
export async function deleteWindowsBefore(db: Db, before: Date): Promise<void> {
  await db.query(sql`DELETE FROM rate_limit_windows WHERE window_start < ${before}`);
}

/** One `usage_ledger` row as written: costs already priced (ledger.ts rounds the micros). */
export interface LedgerRow {
  workspaceId: string;
  keyId: string;
  requestId: string | null;
  tier: string;
  catalogModel: string;
  providerModel: string;
  inputTokens: number;
  outputTokens: number;
  costMicros: bigint;
  costPicos: bigint;
  aiCall: boolean;
  createdAt: Date;
}

/** Appends ledger rows in one statement. */
export async function insertLedgerRows(db: Db, rows: readonly LedgerRow[]): Promise<void> {
  if (rows.length === 0) return;
  const col = <T>(f: (r: LedgerRow) => T): T[] => rows.map(f);
  await db.query(sql`
    INSERT INTO usage_ledger (workspace_id, key_id, request_id, tier, catalog_model, provider_model,
                              input_tokens, output_tokens, cost_micros, cost_picos, ai_call, created_at)
    SELECT * FROM unnest(${col((r) => r.workspaceId)}::uuid[], ${col((r) => r.keyId)}::uuid[],
                         ${col((r) => r.requestId)}::text[], ${col((r) => r.tier)}::text[],
                         ${col((r) => r.catalogModel)}::text[], ${col((r) => r.providerModel)}::text[],
                         ${col((r) => r.inputTokens)}::int[], ${col((r) => r.outputTokens)}::int[],
                         ${col((r) => r.costMicros.toString())}::bigint[], ${col((r) => r.costPicos.toString())}::bigint[],
                         ${col((r) => r.aiCall)}::boolean[], ${col((r) => r.createdAt)}::timestamptz[])`);
}

// ---------------------------------------------------------------------------------------------
// The monthly AI-call quota (quota.ts holds the invariants and the service over these).

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
 * A data-modifying CTE body inserting ledger rows from `rows`, a fragment selecting, in order,
 * workspace_id, key_id, request_id, tier, catalog_model, provider_model, input_tokens,
 * output_tokens, cost_micros, cost_picos, ai_call and created_at (`ledgerCallColumns` of
 * ledger.ts gives the per-call columns). For the statements that store triage answers with
 * their charge in one commit (`triage-store.ts`).
 */
export function insertLedgerRowsFrom(rows: SqlFragment): SqlFragment {
  return sql`INSERT INTO usage_ledger (workspace_id, key_id, request_id, tier, catalog_model, provider_model,
                            input_tokens, output_tokens, cost_micros, cost_picos, ai_call, created_at)
  ${rows}`;
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

// ---------------------------------------------------------------------------------------------
// Reports (usage-report.ts sums and rounds these).

/** Whose usage a series is: one key or one workspace. */
export interface UsageScope {
  column: 'key_id' | 'workspace_id';
  id: string;
}

/** Usage of one UTC day; spend in picodollars, as a decimal string (exact). */
export interface UsageDayRow {
  day: string;
  requests: number;
  aiCalls: number;
  inputTokens: number;
  outputTokens: number;
  spendPicos: string;
}

/**
 * One row per UTC day of [from, to), days without use included: requests from the per-key
 * counters, model calls, tokens and spend from the ledger.
 */
export async function usageByDay(db: Db, scope: UsageScope, from: Date, to: Date): Promise<UsageDayRow[]> {
  const column = sql.identifier(scope.column, ['key_id', 'workspace_id']);
  const res = await db.query<{
    day: string;
    requests: string;
    ai_calls: string;
    input_tokens: string;
    output_tokens: string;
    spend: string;
  }>(sql`
    WITH days AS (
      SELECT d::date AS day FROM generate_series(${from}::date, (${to}::date - 1), interval '1 day') AS d
    ), req AS (
      SELECT day, sum(requests) AS requests FROM key_request_counters
       WHERE ${column} = ${scope.id} AND day >= ${from}::date AND day < ${to}::date GROUP BY day
    ), led AS (
      SELECT (created_at AT TIME ZONE 'UTC')::date AS day, count(*) FILTER (WHERE ai_call) AS ai_calls,
             sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cost_picos) AS spend
        FROM usage_ledger
       WHERE ${column} = ${scope.id} AND created_at >= ${from}::date AND created_at < ${to}::date GROUP BY 1
    )
    SELECT to_char(days.day, 'YYYY-MM-DD') AS day,
           COALESCE(req.requests, 0)::text AS requests, COALESCE(led.ai_calls, 0)::text AS ai_calls,
           COALESCE(led.input_tokens, 0)::text AS input_tokens, COALESCE(led.output_tokens, 0)::text AS output_tokens,
           COALESCE(led.spend, 0)::text AS spend
      FROM days LEFT JOIN req ON req.day = days.day LEFT JOIN led ON led.day = days.day
     ORDER BY days.day`);
  return res.rows.map((r) => ({
    day: r.day,
    requests: Number(r.requests),
    aiCalls: Number(r.ai_calls),
    inputTokens: Number(r.input_tokens),
    outputTokens: Number(r.output_tokens),
    spendPicos: r.spend,
  }));
}

/** Ledger sums of one key and catalog model over a period; spend in picodollars. */
export interface LedgerLineRow {
  keyId: string;
  catalogModel: string;
  aiCalls: number;
  inputTokens: number;
  outputTokens: number;
  spendPicos: string;
}

/** The ledger of a workspace over [from, to), summed per key and catalog model, in that order. */
export async function ledgerLines(
  db: Db,
  workspaceId: string,
  from: Date,
  to: Date,
): Promise<LedgerLineRow[]> {
  const res = await db.query<{
    key_id: string;
    tier: string;
    ai_calls: string;
    input_tokens: string;
    output_tokens: string;
    spend: string;
  }>(sql`
    SELECT key_id, catalog_model AS tier, count(*) FILTER (WHERE ai_call)::text AS ai_calls,
           sum(input_tokens)::text AS input_tokens, sum(output_tokens)::text AS output_tokens, sum(cost_picos)::text AS spend
      FROM usage_ledger WHERE workspace_id = ${workspaceId} AND created_at >= ${from} AND created_at < ${to}
     GROUP BY key_id, catalog_model ORDER BY key_id, catalog_model`);
  return res.rows.map((r) => ({
    keyId: r.key_id,
    catalogModel: r.tier,
    aiCalls: Number(r.ai_calls),
    inputTokens: Number(r.input_tokens),
    outputTokens: Number(r.output_tokens),
    spendPicos: r.spend,
  }));
}

/** Lifetime requests, tokens and spend (picodollars) of one key. */
export interface KeyTotalsRow {
  keyId: string;
  requests: number;
  tokens: number;
  spendPicos: string;
}

/** Lifetime totals of every key of a workspace (zeros for a key never used). */
export async function keyTotals(db: Db, workspaceId: string): Promise<KeyTotalsRow[]> {
  const res = await db.query<{ key_id: string; requests: string; tokens: string; spend: string }>(sql`
    SELECT k.id AS key_id,
           COALESCE((SELECT sum(requests) FROM key_request_counters c WHERE c.key_id = k.id), 0)::text AS requests,
           COALESCE(l.tokens, 0)::text AS tokens, COALESCE(l.spend, 0)::text AS spend
      FROM api_keys k
      LEFT JOIN (SELECT key_id, sum(input_tokens + output_tokens) AS tokens, sum(cost_picos) AS spend
                   FROM usage_ledger WHERE workspace_id = ${workspaceId} GROUP BY key_id) l ON l.key_id = k.id
     WHERE k.workspace_id = ${workspaceId}`);
  return res.rows.map((r) => ({
    keyId: r.key_id,
    requests: Number(r.requests),
    tokens: Number(r.tokens),
    spendPicos: r.spend,
  }));
}

/** A workspace's model tokens of all time and its model spend since `monthStart`, in picodollars. */
export async function workspaceLedgerTotals(
  db: Db,
  workspaceId: string,
  monthStart: string,
): Promise<{ tokens: number; spendPicos: string }> {
  const { rows } = await db.query<{ tokens: string; spend: string }>(
    sql`SELECT (SELECT COALESCE(sum(input_tokens + output_tokens), 0) FROM usage_ledger WHERE workspace_id = ${workspaceId})::text AS tokens,
               (SELECT COALESCE(sum(cost_picos), 0) FROM usage_ledger
                 WHERE workspace_id = ${workspaceId} AND created_at >= ${monthStart}::date)::text AS spend`,
  );
  return { tokens: Number(rows[0]?.tokens ?? 0), spendPicos: rows[0]?.spend ?? '0' };
}
