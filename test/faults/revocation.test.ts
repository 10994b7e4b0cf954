import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, queueBackends, testRedisUrl } from '../helpers/db.js';
import { signUp, startTestApp, type TestApp } from '../helpers/test-app.js';
import {
  createPgInvalidationBus,
  createRedisInvalidationBus,
  type Invalidation,
  type InvalidationBus,
} from '../../src/domain/keys/invalidation-bus.js';
import { startTcpProxy, viaProxy, type TcpProxy } from './tcp-proxy.js';

/**
 * docs/operations.md#failure-behaviour: a revoke is refused in every process within one second whatever happens to
 * the invalidation connections. Two app instances on one database (and one Redis): `a` has
 * the key cached, `b` revokes it. The key cache TTL stays at its default (30 s), so only the
 * resubscribe reset and the key-version check can make `a` refuse in time.
 */
const REFUSED_WITHIN_MS = 1_000;

async function revokeIn(app: TestApp, session: { cookie: string; csrf: string }, keyId: string) {
  const res = await app.app.inject({
    method: 'POST',
    url: `/api/console/keys/${keyId}/revoke`,
    headers: { cookie: session.cookie, 'x-csrf-token': session.csrf },
    payload: {},
  });
  expect(res.statusCode).toBe(200);
}

async function keyStatus(app: TestApp, key: string): Promise<number> {
  const res = await app.app.inject({ method: 'GET', url: '/api/v1/keys/me', headers: { 'x-api-key': key } });
  return res.statusCode;
}

for (const backend of queueBackends('faults/revocation')) {
  describe.skipIf(!backend.redisUrl && backend.name === 'Redis')(
    `revocation across processes (${backend.name})`,
    () => {
      let a: TestApp;
      let b: TestApp;

      beforeAll(async () => {
        a = await startTestApp({ redisUrl: backend.redisUrl });
        b = await startTestApp({ redisUrl: backend.redisUrl, databaseUrl: a.databaseUrl });
      });
      afterAll(async () => {
        await b?.close();
        await a?.close();
      });

      async function cachedKey() {
        const user = await signUp(a.app);
        expect(await keyStatus(a, user.key)).toBe(200);
        expect(await keyStatus(a, user.key)).toBe(200);
        return user;
      }

      it('refuses a revoked key within one second in another process when the message is lost', async () => {
        const user = await cachedKey();
        const publish = b.infra.bus.publish;
        b.infra.bus.publish = async () => undefined; // the message never leaves `b`
        try {
          await revokeIn(b, user, user.keyId);
        } finally {
          b.infra.bus.publish = publish;
        }
        await expect
          .poll(() => keyStatus(a, user.key), { timeout: REFUSED_WITHIN_MS, interval: 20 })
          .toBe(401);
      });

      it('refuses a revoked key within one second after the subscriber connection is dropped', async () => {
        const user = await cachedKey();
        if (backend.redisUrl) {
          const admin = new Redis(backend.redisUrl);
          try {
            expect(await admin.client('KILL', 'ID', await subscriberId(admin, a))).toBe(1);
          } finally {
            admin.disconnect();
          }
        } else {
          const admin = new pg.Client(a.databaseUrl);
          await admin.connect();
          try {
            const res = await admin.query(
              `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
              WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
            );
            expect(res.rowCount).toBeGreaterThan(0);
          } finally {
            await admin.end();
          }
        }
        await revokeIn(b, user, user.keyId);
        await expect
          .poll(() => keyStatus(a, user.key), { timeout: REFUSED_WITHIN_MS, interval: 20 })
          .toBe(401);
        await expect.poll(() => a.infra.bus.isLive(), { timeout: 10_000 }).toBe(true);
      });
    },
  );
}

/** The client id of `app`'s invalidation subscriber, found by its connection name. */
async function subscriberId(admin: Redis, app: TestApp): Promise<string> {
  const list = String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub'));
  const name = `name=${app.deps.config.redisPrefix}:key-invalidation `;
  const id = list
    .split('\n')
    .find((l) => l.includes(name))
    ?.match(/\bid=(\d+)/)?.[1];
  if (!id) throw new Error('invalidation subscriber not found in CLIENT LIST');
  return id;
}

/**
 * The subscription itself through a proxy that cuts the connection and then refuses new
 * ones for longer than the first retries: the listener must keep retrying (the PostgreSQL
 * one used to give up after one failed reconnect) and start hearing messages again.
 */
describe('invalidation subscription after failed reconnects', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let pool: pg.Pool;
  let proxy: TcpProxy;
  const closing: (() => Promise<void> | void)[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
  });
  afterEach(async () => {
    for (const c of closing.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  async function partitionAndHeal(listener: InvalidationBus, publisher: InvalidationBus): Promise<void> {
    const heard: Invalidation[] = [];
    listener.subscribe((m) => heard.push(m));
    await expect.poll(() => listener.isLive(), { timeout: 5_000 }).toBe(true);
    await proxy.refuse(); // cuts the live connection and refuses reconnects
    await expect.poll(() => listener.isLive(), { timeout: 2_000 }).toBe(false);
    await new Promise((r) => setTimeout(r, 1_500)); // several reconnects fail meanwhile
    await proxy.open();
    await expect.poll(() => listener.isLive(), { timeout: 8_000 }).toBe(true);
    expect(heard).toContainEqual({ kind: 'all', id: '*' }); // the cache was told to forget
    await publisher.publish({ kind: 'key', id: 'after-heal' });
    await expect.poll(() => heard, { timeout: 2_000 }).toContainEqual({ kind: 'key', id: 'after-heal' });
  }

  it('PostgreSQL LISTEN reconnects with backoff and hears messages again', async () => {
    const u = new URL(db.url);
    proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port || 5432) });
    closing.push(() => proxy.close());
    const listener = createPgInvalidationBus(pool, viaProxy(db.url, proxy));
    const publisher = createPgInvalidationBus(pool, db.url);
    closing.push(
      () => listener.close(),
      () => publisher.close(),
    );
    await partitionAndHeal(listener, publisher);
  });

  it.skipIf(!testRedisUrl())('Redis SUBSCRIBE reconnects and hears messages again', async () => {
    const url = testRedisUrl();
    const u = new URL(url);
    proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port || 6379) });
    closing.push(() => proxy.close());
    const prefix = `t${Math.random().toString(36).slice(2, 10)}`;
    const viaRedis = new Redis(viaProxy(url, proxy));
    const direct = new Redis(url);
    viaRedis.on('error', () => undefined);
    const listener = createRedisInvalidationBus(viaRedis, prefix);
    const publisher = createRedisInvalidationBus(direct, prefix);
    closing.push(
      () => listener.close(),
      () => publisher.close(),
      () => viaRedis.disconnect(),
      () => direct.disconnect(),
    );
    await partitionAndHeal(listener, publisher);
  });
});
