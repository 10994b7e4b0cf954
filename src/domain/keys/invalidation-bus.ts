import pg from 'pg';
import type { Redis } from 'ioredis';
import type { Queryable } from '../../db/pool.js';
import { sql } from '../../db/sql.js';

/**
 * Tells every process to forget what it cached about a key or a workspace, so a revoke,
 * rotation or plan change takes effect everywhere within a second (docs/api.md#keys).
 * Redis pub/sub when there is Redis, PostgreSQL LISTEN/NOTIFY otherwise.
 *
 * A message can be lost (the subscriber connection drops, the publish fails after the commit),
 * so the bus is only the fast path: `kind: 'all'` is delivered on every (re)subscribe, `isLive()`
 * tells the key cache to stand aside while the subscription is down, and the key-version
 * counter (`keys-store.ts`, read by the verifier at most once a second) catches the rest.
 */
export interface Invalidation {
  kind: 'key' | 'workspace' | 'all';
  id: string;
}

export interface InvalidationBus {
  publish(message: Invalidation): Promise<void>;
  subscribe(handler: (message: Invalidation) => void): void;
  /** True while this process is subscribed: only then may it trust what it cached. */
  isLive(): boolean;
  close(): Promise<void>;
}

const CHANNEL = 'svc_key_invalidation';
/** A message lost because the publish failed is caught by the key-version check: never wait long. */
const PUBLISH_DEADLINE_MS = 1_000;
const RESUBSCRIBED: Invalidation = { kind: 'all', id: '*' };

/**
 * The publishing process forgets at once, before the message goes out: its own next request
 * must not wait for the round trip through Redis or PostgreSQL. Handlers are idempotent, so
 * hearing the message again when it comes back is harmless.
 */
function deliver(handlers: readonly ((m: Invalidation) => void)[], message: Invalidation): void {
  for (const h of handlers) h(message);
}

function parse(payload: string): Invalidation | null {
  try {
    const m = JSON.parse(payload) as Invalidation;
    return (m.kind === 'key' || m.kind === 'workspace') && typeof m.id === 'string' ? m : null;
  } catch {
    return null;
  }
}

/**
 * Sends without letting a failure reach the caller: the change is committed when this runs,
 * and a route must not answer an error for a committed change (docs/operations.md#failure-behaviour).
 */
async function sendQuietly(send: () => Promise<unknown>, onError: (err: Error) => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      send(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('invalidation publish timed out')), PUBLISH_DEADLINE_MS);
      }),
    ]);
  } catch (err) {
    onError(err as Error);
  } finally {
    clearTimeout(timer);
  }
}

export interface BusOptions {
  /** Told about a failed publish or a dropped subscription (the bus recovers by itself). */
  onError?: (err: Error, what: string) => void;
}

/** `prefix`: the deployment's REDIS_PREFIX, so deployments sharing a Redis do not hear each other. */
export function createRedisInvalidationBus(
  publisher: Redis,
  prefix = 'svc',
  options: BusOptions = {},
): InvalidationBus {
  const onError = options.onError ?? (() => undefined);
  const channel = `${prefix}:key-invalidation`;
  // Named so an operator (or a fault test) can find it in CLIENT LIST.
  const subscriber = publisher.duplicate({ connectionName: `${prefix}:key-invalidation` });
  const handlers: ((m: Invalidation) => void)[] = [];
  let live = false;
  let closed = false;
  subscriber.on('message', (_channel: string, payload: string) => {
    const m = parse(payload);
    if (m) deliver(handlers, m);
  });
  subscriber.on('error', (err: Error) => onError(err, 'invalidation subscriber'));
  for (const event of ['close', 'reconnecting', 'end']) subscriber.on(event, () => (live = false));
  // On every (re)connection: messages published while the connection was down are lost, so
  // the cache is dropped once the SUBSCRIBE reply proves the channel is heard again.
  const resubscribe = (): Promise<void> =>
    subscriber.subscribe(channel).then(
      () => {
        if (closed || subscriber.status !== 'ready') return;
        live = true;
        deliver(handlers, RESUBSCRIBED);
      },
      (err: Error) => onError(err, 'invalidation subscribe'),
    );
  subscriber.on('ready', () => void resubscribe());
  const ready = resubscribe();
  return {
    async publish(message) {
      deliver(handlers, message);
      await sendQuietly(
        () => publisher.publish(channel, JSON.stringify(message)),
        (e) => onError(e, 'invalidation publish'),
      );
    },
    subscribe(handler) {
      handlers.push(handler);
    },
    isLive: () => live,
    async close() {
      closed = true;
      live = false;
      await ready.catch(() => undefined);
      subscriber.disconnect();
    },
  };
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * LISTEN on a dedicated connection, reconnected with capped exponential backoff for as long
 * as the bus is open: a failed reconnect is retried too (it used to end the listener for good).
 */
export function createPgInvalidationBus(
  db: Queryable,
  databaseUrl: string,
  options: BusOptions = {},
): InvalidationBus {
  const onError = options.onError ?? (() => undefined);
  const handlers: ((m: Invalidation) => void)[] = [];
  let client: pg.Client | null = null;
  let live = false;
  let closed = false;
  let retryMs = RETRY_MIN_MS;
  let retryTimer: NodeJS.Timeout | null = null;

  function scheduleReconnect(): void {
    live = false;
    if (closed || retryTimer) return;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      void listen();
    }, retryMs);
    retryTimer.unref();
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  }

  async function listen(): Promise<void> {
    if (closed) return;
    const c = new pg.Client(databaseUrl);
    let dropped = false;
    const drop = (err?: Error): void => {
      if (dropped) return;
      dropped = true;
      if (err) onError(err, 'invalidation listener');
      if (client === c) client = null;
      void c.end().catch(() => undefined);
      scheduleReconnect();
    };
    c.on('notification', (n) => {
      const m = n.payload ? parse(n.payload) : null;
      if (m) deliver(handlers, m);
    });
    c.on('error', drop);
    c.on('end', () => drop());
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      drop(err as Error);
      return;
    }
    if (closed || dropped) {
      void c.end().catch(() => undefined);
      return;
    }
    client = c;
    retryMs = RETRY_MIN_MS;
    live = true;
    deliver(handlers, RESUBSCRIBED);
  }
  const ready = listen();

  return {
    async publish(message) {
      deliver(handlers, message);
      await sendQuietly(
        () => db.query(sql`SELECT pg_notify(${CHANNEL}, ${JSON.stringify(message)})`),
        (e) => onError(e, 'invalidation publish'),
      );
    },
    subscribe(handler) {
      handlers.push(handler);
    },
    isLive: () => live,
    async close() {
      closed = true;
      live = false;
      if (retryTimer) clearTimeout(retryTimer);
      await ready.catch(() => undefined);
      await client?.end().catch(() => undefined);
    },
  };
}
