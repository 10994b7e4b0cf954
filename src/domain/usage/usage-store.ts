import type { Queryable } from '../../db/pool.js';
import { sql } from '../../db/sql.js';

/**
 * The usage area's tables: `key_request_counters` and `rate_limit_windows` (more move here as
 * the area's other modules are converted). Functions take `(db, …)` (the pool or a transaction
 * client) and speak camelCase; nothing else in the area writes SQL against these tables.
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
