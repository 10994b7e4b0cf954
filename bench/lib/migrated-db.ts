/**
 * A migrated bench database with one workspace: what the case benches start from. The pool and
 * the database go with `close()` (the database kept when `keep`).
 */
import type pg from 'pg';
import { createOrm, migrate } from '../../src/db/orm.js';
import { createPool } from '../../src/db/pool.js';
import { createBenchDatabase } from './bench-db.js';

export async function migratedBenchDatabase(
  prefix: string,
  poolMax: number,
): Promise<{
  url: string;
  pool: pg.Pool;
  workspaceId: string;
  close(opts?: { keep?: boolean }): Promise<void>;
}> {
  const db = await createBenchDatabase(prefix);
  const orm = await createOrm(db.url, { poolMax: 2 });
  await migrate(orm, db.url);
  await orm.close(true);
  const pool = createPool(db.url, poolMax);
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO workspaces (id, name, plan) VALUES (gen_random_uuid(), 'bench', 'service') RETURNING id`,
  );
  return {
    url: db.url,
    pool,
    workspaceId: rows[0]!.id,
    async close(opts = {}) {
      await pool.end();
      if (!opts.keep) await db.drop();
    },
  };
}
