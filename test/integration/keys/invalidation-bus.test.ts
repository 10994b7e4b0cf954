import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPgInvalidationBus,
  createRedisInvalidationBus,
  type Invalidation,
  type InvalidationBus,
} from '../../../src/domain/keys/invalidation-bus.js';
import { createTestDatabase, testRedisUrl } from '../../helpers/db.js';

const redisUrl = testRedisUrl();

/**
 * The process that revokes a key must forget it before `publish` resolves: its next request
 * cannot wait for the message to come back through Redis or PostgreSQL (a CI run once saw a
 * revoked key answer 200 on the very next request in the same process).
 */
async function expectLocalDeliveryFirst(bus: InvalidationBus): Promise<void> {
  const heard: Invalidation[] = [];
  // `all` is what every (re)subscribe delivers (docs/operations.md#failure-behaviour), not part of this check.
  bus.subscribe((m) => m.kind !== 'all' && heard.push(m));
  const publishing = bus.publish({ kind: 'key', id: 'k-1' });
  expect(heard).toEqual([{ kind: 'key', id: 'k-1' }]);
  await publishing;
}

describe('invalidation bus', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let pool: pg.Pool;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    pool.on('error', () => undefined);
  });

  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it('delivers to its own process synchronously, then to others (PostgreSQL LISTEN/NOTIFY)', async () => {
    const publisher = createPgInvalidationBus(pool, db.url);
    const other = createPgInvalidationBus(pool, db.url);
    const remote: Invalidation[] = [];
    other.subscribe((m) => m.kind !== 'all' && remote.push(m));
    try {
      await new Promise((r) => setTimeout(r, 300)); // both listeners connected
      await expectLocalDeliveryFirst(publisher);
      await expect.poll(() => remote, { timeout: 1_000 }).toEqual([{ kind: 'key', id: 'k-1' }]);
    } finally {
      await publisher.close();
      await other.close();
    }
  });

  it.skipIf(!redisUrl)(
    'delivers to its own process synchronously, then to others (Redis pub/sub)',
    async () => {
      const prefix = `t${randomBytes(4).toString('hex')}`;
      const a = new Redis(redisUrl);
      const b = new Redis(redisUrl);
      const publisher = createRedisInvalidationBus(a, prefix);
      const other = createRedisInvalidationBus(b, prefix);
      const remote: Invalidation[] = [];
      other.subscribe((m) => m.kind !== 'all' && remote.push(m));
      try {
        await new Promise((r) => setTimeout(r, 300));
        await expectLocalDeliveryFirst(publisher);
        await expect.poll(() => remote, { timeout: 1_000 }).toEqual([{ kind: 'key', id: 'k-1' }]);
      } finally {
        await publisher.close();
        await other.close();
        a.disconnect();
        b.disconnect();
      }
    },
  );
});
