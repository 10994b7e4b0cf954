import pg from 'pg';
import { isConnectionLost } from './connection-errors.js';

/** Anything that runs a parameterised query: a pool, or one client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;
export type Pool = pg.Pool;

/**
 * How long a caller waits for a connection (a free slot, or a new connection to open) before
 * the pool gives up with "timeout exceeded when trying to connect": a database that accepts
 * no connection becomes a 503 instead of a request that hangs.
 */
export const POOL_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Connections a pool keeps open however long they sit idle (at most its `max`). Above them, a
 * connection idle for {@link POOL_IDLE_TIMEOUT_MS} closes. Under sparse traffic a pool needs a
 * second or third connection now and then (the one answer's statement while the request meter
 * flushes and the key-version check runs); closed after each idle spell, every such moment
 * opened a new one, and the statement that got it paid the new backend's start, its cold
 * catalog caches and the named statement's preparation: a stall of the hot path, not a saving
 * (docs/operations.md#database-connections).
 */
export const POOL_KEEP_OPEN = 3;

/** How long a connection above {@link POOL_KEEP_OPEN} may sit idle before it closes. */
export const POOL_IDLE_TIMEOUT_MS = 10_000;

/**
 * The pool for set-based SQL on hot paths (keys, quotas, counters, bulk loads). With
 * `synchronousCommit: false` its commits do not wait for the WAL flush: only for writes whose
 * loss in a database crash is harmless (see the quota reservation). It keeps
 * {@link POOL_KEEP_OPEN} connections (or `keepOpen`) once it has opened them.
 *
 * Every client it opens carries an 'error' listener for its whole life, checked out or idle: a
 * server that ends the session (`pg_terminate_backend`, a failover) makes `pg` emit 'error' on
 * the client, and an 'error' with no listener ends the process. The statement in flight fails
 * with the error itself, which is how the caller learns of it. A read-only statement run on the
 * pool that fails so is retried once on a fresh connection (see {@link isReadOnlyStatement}).
 */
export function createPool(
  databaseUrl: string,
  max = 10,
  opts: { synchronousCommit?: boolean; keepOpen?: number; idleTimeoutMs?: number } = {},
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    min: Math.min(max, opts.keepOpen ?? POOL_KEEP_OPEN),
    idleTimeoutMillis: opts.idleTimeoutMs ?? POOL_IDLE_TIMEOUT_MS,
    connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS,
    ...(opts.synchronousCommit === false ? { options: '-c synchronous_commit=off' } : {}),
  });
  guardClients(pool);
  retryReadsOnce(pool);
  return pool;
}

/**
 * Gives every client `pool` opens a lifelong 'error' listener (see {@link createPool}); the
 * pool's own 'error' (an idle client lost) is absorbed too. For pools this module does not
 * create: BullMQ's PostgreSQL backend.
 */
export function guardClients(pool: pg.Pool): void {
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
}

/**
 * True for one statement that only reads: a plain SELECT (or VALUES, SHOW, TABLE) with no
 * locking clause and no data-modifying CTE. Such a statement, sent outside a transaction and
 * lost with its connection, can run again with the same meaning; a write cannot (it may have
 * committed before the connection was lost).
 */
export function isReadOnlyStatement(text: string): boolean {
  const head = text.trimStart().slice(0, 8).toLowerCase();
  if (!/^(select|values|show|table)\b/.test(head)) return false;
  return !/\b(insert|update|delete|merge|for\s+(no\s+key\s+)?(update|share)|for\s+key\s+share|nextval|setval|pg_notify|pg_advisory\w*|pg_terminate_backend)\b/i.test(
    text,
  );
}

type QueryFn = (...args: unknown[]) => Promise<unknown>;

/** Wraps `pool.query` so a read-only statement lost with its connection runs once more. */
function retryReadsOnce(pool: pg.Pool): void {
  const query = pool.query.bind(pool) as unknown as QueryFn;
  (pool as unknown as { query: QueryFn }).query = (...args: unknown[]) => {
    // The callback form is left alone: nothing here uses it, and it returns no promise.
    if (args.some((a) => typeof a === 'function')) return query(...args);
    const first = args[0];
    const text = typeof first === 'string' ? first : (first as { text?: unknown } | null)?.text;
    const attempt = query(...args);
    if (typeof text !== 'string' || !isReadOnlyStatement(text)) return attempt;
    return attempt.catch((err: unknown) => {
      if (!isConnectionLost(err) || pool.ending) throw err;
      return query(...args);
    });
  };
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
  /**
   * Run `fn` once more from the start when the connection is lost before COMMIT is sent (see
   * {@link withTransaction}). Off for a transaction that reads a stream as it goes: a second
   * run would find the stream spent.
   * @defaultValue true
   */
  retryOnLostConnection?: boolean;
}

/**
 * Runs `fn` in one transaction: COMMIT when it resolves, ROLLBACK when it throws (and the error
 * is rethrown). The one transaction idiom of the code base.
 *
 * - Given the pool, it checks a client out and always releases it; a client whose ROLLBACK
 *   failed is destroyed, never handed to the next caller in an unknown state. When the
 *   connection is lost before COMMIT is sent, the whole of `fn` runs once more on a fresh
 *   connection, so `fn` must keep its effects inside the transaction (the database rolled the
 *   first run back; anything it did elsewhere happens twice).
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
    for (let attempt = 1; ; attempt++) {
      const progress = { commitSent: false };
      try {
        return await pooledTransaction(db, fn, options.prelude, progress);
      } catch (err) {
        // Lost before COMMIT was sent: the server rolled it back, so running it again from the
        // start is the same request. Lost during COMMIT: it may have committed; never repeat.
        const retry = attempt === 1 && options.retryOnLostConnection !== false && !progress.commitSent;
        if (!retry || db.ending || !isConnectionLost(err)) throw err;
      }
    }
  }
  return transaction(db, fn, options.prelude, () => undefined, { commitSent: false });
}

async function pooledTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient, prelude: pg.QueryResult[]) => Promise<T>,
  prelude: string | undefined,
  progress: { commitSent: boolean },
): Promise<T> {
  const client = await pool.connect();
  let destroy = false;
  try {
    return await transaction(client, fn, prelude, () => (destroy = true), progress);
  } finally {
    client.release(destroy || undefined);
  }
}

function isClient(db: Db): db is pg.PoolClient {
  return 'release' in db && typeof db.release === 'function';
}

async function transaction<T>(
  client: pg.PoolClient,
  fn: (client: pg.PoolClient, prelude: pg.QueryResult[]) => Promise<T>,
  prelude: string | undefined,
  onBrokenRollback: () => void,
  progress: { commitSent: boolean },
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
    if (!savepoint) progress.commitSent = true;
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
