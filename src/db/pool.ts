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

/**
 * What a store function takes first: the pool, or a client checked out of it (inside
 * {@link withTransaction}, or held by a writer that owns one connection). One type, so a store
 * function runs alone or as one step of a caller's transaction without a second version.
 */
export type Db = pg.Pool | pg.PoolClient;

/** Clients inside a transaction of {@link withTransaction}, with their savepoint depth. */
const open = new WeakMap<pg.PoolClient, number>();

/**
 * Runs `fn` in one transaction: COMMIT when it resolves, ROLLBACK when it throws (and the error
 * is rethrown). The one transaction idiom of the code base.
 *
 * - Given the pool, it checks a client out and always releases it; a client whose ROLLBACK
 *   failed is destroyed, never handed to the next caller in an unknown state.
 * - Given a client it does not own (a writer's dedicated connection), it leaves the release to
 *   the owner.
 * - Given a client already inside `withTransaction`, the inner call is a SAVEPOINT: it rolls
 *   back alone, and the outer transaction decides the commit.
 */
export async function withTransaction<T>(db: Db, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  if (!isClient(db)) {
    const client = await db.connect();
    let destroy = false;
    try {
      return await transaction(client, fn, () => (destroy = true));
    } finally {
      client.release(destroy || undefined);
    }
  }
  return transaction(db, fn, () => undefined);
}

function isClient(db: Db): db is pg.PoolClient {
  return 'release' in db && typeof db.release === 'function';
}

async function transaction<T>(
  client: pg.PoolClient,
  fn: (client: pg.PoolClient) => Promise<T>,
  onBrokenRollback: () => void,
): Promise<T> {
  const depth = open.get(client);
  const savepoint = depth === undefined ? null : `tx_${depth + 1}`;
  await client.query(savepoint ? `SAVEPOINT ${savepoint}` : 'BEGIN');
  open.set(client, (depth ?? -1) + 1);
  try {
    const result = await fn(client);
    await client.query(savepoint ? `RELEASE SAVEPOINT ${savepoint}` : 'COMMIT');
    return result;
  } catch (err) {
    await client.query(savepoint ? `ROLLBACK TO SAVEPOINT ${savepoint}` : 'ROLLBACK').catch(onBrokenRollback);
    throw err;
  } finally {
    if (depth === undefined) open.delete(client);
    else open.set(client, depth);
  }
}
