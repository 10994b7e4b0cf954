import type { Queryable } from '../../db/pool.js';

/**
 * The key-version counter (migration m008): moved by triggers on every change to what a
 * process caches about a key or workspace. Returned as text: a bigint compared for equality.
 */
export async function readKeyVersion(db: Queryable): Promise<string> {
  const res = await db.query<{ version: string }>(
    'SELECT version::text AS version FROM key_version WHERE id = 1',
  );
  return res.rows[0]?.version ?? '0';
}
