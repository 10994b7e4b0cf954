import pg from 'pg';

/** Anything that runs a parameterised query: a pool, or one client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;
export type Pool = pg.Pool;

/**
 * The pool for set-based SQL on hot paths (keys, quotas, counters, bulk loads). With
 * `synchronousCommit: false` its commits do not wait for the WAL flush: only for writes whose
 * loss in a database crash is harmless (see the quota reservation).
 */
export function createPool(
  databaseUrl: string,
  max = 10,
  opts: { synchronousCommit?: boolean } = {},
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    idleTimeoutMillis: 10_000,
    ...(opts.synchronousCommit === false ? { options: '-c synchronous_commit=off' } : {}),
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

/** Runs `fn` in one transaction on one client; rolls back if it throws. */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
