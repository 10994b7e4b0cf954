import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';

/**
 * The usage area's counters: `key_request_counters` (requests per key and UTC day, written by
 * the request meter) and `rate_limit_windows` (hits per bucket and window, the rate limiter's).
 * `api_keys.last_used_at` is written here too: the meter owns that one column of the keys area,
 * so a request costs no write of its own.
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
 * owns this one column's writes (no write per request). Counts of a key that no longer exists
 * (its workspace was deleted, docs/operations.md#end-of-life) are dropped: written, they would
 * fail the foreign key, and with it every later flush of the process that kept them.
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
      SELECT c.* FROM unnest(${counts.map((c) => c.keyId)}::uuid[], ${counts.map((c) => c.workspaceId)}::uuid[],
                             ${counts.map((c) => c.day)}::date[], ${counts.map((c) => c.requests)}::bigint[])
                      AS c(key_id, workspace_id, day, requests)
       WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.id = c.key_id)
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
