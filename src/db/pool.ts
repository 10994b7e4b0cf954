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

/** Options of {@link withTransaction}. */
export interface TransactionOptions {
  /**
   * Statements sent with BEGIN (or SAVEPOINT) as one simple query: one round trip instead of one
   * per statement, for a hot path that counts them (the scan writer). A simple query takes no
   * parameters, so the caller puts only literals it has checked into it. The results of its
   * statements reach `fn` as its second argument, in order. If it fails, the transaction is
   * rolled back and the error rethrown, as for an error of `fn`.
   */
  prelude?: string;
}

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
 * - With `options.prelude`, those statements ride in the BEGIN's round trip (see
 *   {@link TransactionOptions.prelude}); `fn` gets their results.
 */
export async function withTransaction<T>(
  db: Db,
  fn: (client: pg.PoolClient, prelude: pg.QueryResult[]) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  if (!isClient(db)) {
    const client = await db.connect();
    let destroy = false;
    try {
      return await transaction(client, fn, options.prelude, () => (destroy = true));
    } finally {
      client.release(destroy || undefined);
    }
  }
  return transaction(db, fn, options.prelude, () => undefined);
}

function isClient(db: Db): db is pg.PoolClient {
  return 'release' in db && typeof db.release === 'function';
}

async function transaction<T>(
  client: pg.PoolClient,
  fn: (client: pg.PoolClient, prelude: pg.QueryResult[]) => Promise<T>,
  prelude: string | undefined,
  onBrokenRollback: () => void,
): Promise<T> {
  const depth = open.get(client);
  const savepoint = depth === undefined ? null : `tx_${depth + 1}`;
  const begin = savepoint ? `SAVEPOINT ${savepoint}` : 'BEGIN';
  const rollback = savepoint ? `ROLLBACK TO SAVEPOINT ${savepoint}` : 'ROLLBACK';
  let started: pg.QueryResult[] = [];
  if (prelude === undefined) await client.query(begin);
  else {
    try {
      // Several statements in one simple query answer with one result each, BEGIN's first.
      const results = (await client.query(`${begin}; ${prelude}`)) as unknown as
        pg.QueryResult | pg.QueryResult[];
      started = Array.isArray(results) ? results.slice(1) : [];
    } catch (err) {
      // BEGIN ran and a prelude statement failed: the transaction is open and aborted.
      await client.query(rollback).catch(onBrokenRollback);
      throw err;
    }
  }
  open.set(client, (depth ?? -1) + 1);
  try {
    const result = await fn(client, started);
    await client.query(savepoint ? `RELEASE SAVEPOINT ${savepoint}` : 'COMMIT');
    return result;
  } catch (err) {
    await client.query(rollback).catch(onBrokenRollback);
    throw err;
  } finally {
    if (depth === undefined) open.delete(client);
    else open.set(client, depth);
  }
}
