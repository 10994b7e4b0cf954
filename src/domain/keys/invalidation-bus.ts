import pg from 'pg';
import type { Redis } from 'ioredis';
import type { Queryable } from '../../db/pool.js';

/**
 * Tells every process to forget what it cached about a key or a workspace, so a revoke,
 * rotation or plan change takes effect everywhere within a second (DECISIONS §4).
 * Redis pub/sub when there is Redis, PostgreSQL LISTEN/NOTIFY otherwise.
 */
export interface Invalidation {
  kind: 'key' | 'workspace';
  id: string;
}

export interface InvalidationBus {
  publish(message: Invalidation): Promise<void>;
  subscribe(handler: (message: Invalidation) => void): void;
  close(): Promise<void>;
}

const CHANNEL = 'svc_key_invalidation';

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

/** `prefix`: the deployment's REDIS_PREFIX, so deployments sharing a Redis do not hear each other. */
export function createRedisInvalidationBus(publisher: Redis, prefix = 'svc'): InvalidationBus {
  const channel = `${prefix}:key-invalidation`;
  const subscriber = publisher.duplicate();
  const handlers: ((m: Invalidation) => void)[] = [];
  subscriber.on('message', (_channel: string, payload: string) => {
    const m = parse(payload);
    if (m) deliver(handlers, m);
  });
  const ready = subscriber.subscribe(channel);
  return {
    async publish(message) {
      deliver(handlers, message);
      await publisher.publish(channel, JSON.stringify(message));
    },
    subscribe(handler) {
      handlers.push(handler);
    },
    async close() {
      await ready.catch(() => undefined);
      subscriber.disconnect();
    },
  };
}

export function createPgInvalidationBus(db: Queryable, databaseUrl: string): InvalidationBus {
  const handlers: ((m: Invalidation) => void)[] = [];
  let client: pg.Client | null = null;
  let closed = false;

  async function listen(): Promise<void> {
    if (closed) return;
    const c = new pg.Client(databaseUrl);
    c.on('notification', (n) => {
      const m = n.payload ? parse(n.payload) : null;
      if (m) deliver(handlers, m);
    });
    c.on('error', () => {
      // Reconnect: while the listener is down, the cache TTL still bounds staleness.
      client = null;
      void c.end().catch(() => undefined);
      setTimeout(() => void listen().catch(() => undefined), 500).unref();
    });
    await c.connect();
    await c.query(`LISTEN ${CHANNEL}`);
    client = c;
  }
  const ready = listen();

  return {
    async publish(message) {
      deliver(handlers, message);
      await db.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify(message)]);
    },
    subscribe(handler) {
      handlers.push(handler);
    },
    async close() {
      closed = true;
      await ready.catch(() => undefined);
      await client?.end().catch(() => undefined);
    },
  };
}
