import { AppError } from '../lib/errors.js';

/**
 * Recognising a lost or refused database connection, the fault a failover, a restart or a
 * connection-limit kill (`pg_terminate_backend`) produces. Such an error says nothing about the
 * request: it is answered 503 `overloaded` with `Retry-After` (docs/operations.md#failure-behaviour), and a
 * statement that can safely run again is retried once first (see `pool.ts`).
 *
 * Invariant: only errors where the statement either never reached the server or the server
 * dropped the session are recognised. A constraint violation, a deadlock (40P01) or a
 * serialization failure (40001) are answers about the data, handled where they occur.
 */

/** SQLSTATEs of a session ended by the server, or a connection it refused. */
const LOST_SQLSTATES = new Set([
  '57P01', // admin_shutdown: pg_terminate_backend, a fast shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, in recovery
  '53300', // too_many_connections: refused at the connection limit
]);

/** Socket-level codes from Node: the connection was refused, reset or broken. */
const LOST_NODE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/** Messages `pg` and `pg-pool` give when the socket ended or the pool gave up waiting. */
const LOST_MESSAGES = [
  'Connection terminated unexpectedly',
  'Connection terminated due to connection timeout',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'terminating connection due to administrator command',
];

/** How deep `cause` chains are followed (MikroORM and our own wrappers add one or two). */
const MAX_CAUSE_DEPTH = 4;

/**
 * True when `err` (or an error it was caused by) is a lost or refused database connection:
 * SQLSTATE 57P01, 57P02, 57P03, 53300 or class 08 (connection exception), a refused or reset
 * socket, a pool that timed out waiting to connect, or `pg`'s "Connection terminated
 * unexpectedly".
 */
export function isConnectionLost(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth <= MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (LOST_SQLSTATES.has(code) || LOST_NODE_CODES.has(code)) return true;
      if (/^08[0-9A-Z]{3}$/.test(code)) return true;
    }
    const message = current.message;
    if (LOST_MESSAGES.some((m) => message.includes(m))) return true;
    // AggregateError: Node's connect to `localhost` tries each address and reports them all.
    if (current instanceof AggregateError && current.errors.some((e) => isConnectionLost(e))) return true;
    current = current.cause;
  }
  return false;
}

/** Seconds a client is asked to wait before retrying after a lost database connection. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/**
 * 503 `overloaded` with `Retry-After` for a lost database connection: what the one error
 * handler answers, and what a service throws when it catches one itself.
 */
export function databaseUnavailable(cause: unknown): AppError {
  return new AppError('overloaded', 'The service cannot reach its database right now; retry shortly.', {
    headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
    cause,
  });
}
