import type { Queryable } from '../../db/pool.js';
import { sql } from '../../db/sql.js';

/**
 * The usage area's store: functions of `(db, …)` (the pool or a transaction client) that speak
 * camelCase. It is to become the one module naming the area's tables; so far it holds the
 * writes of `key_request_counters`, `rate_limit_windows` and `usage_ledger`. Still elsewhere:
 * `quota.ts` and `usage-report.ts` (their own SQL) and the triage answer statement, which
 * inserts ledger rows through `ledgerCallColumns` of ledger.ts.
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
  db: Queryable,
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
export async function addWindowHits(
  db: Queryable,
  bucket: string,
  windowStart: Date,
  n: number,
): Promise<number> {
  const { rows } = await db.query<{ hits: number }>(sql`
    INSERT INTO rate_limit_windows (bucket, window_start, hits) VALUES (${bucket}, ${windowStart}, ${n})
    ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_limit_windows.hits + EXCLUDED.hits
    RETURNING hits`);
  return rows[0]?.hits ?? n;
}

/** Deletes the rate-limit windows that started before `before`. */
export async function deleteWindowsBefore(db: Queryable, before: Date): Promise<void> {
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
export async function insertLedgerRows(db: Queryable, rows: readonly LedgerRow[]): Promise<void> {
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
