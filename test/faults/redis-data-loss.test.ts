import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueKit, type QueueKit } from '../../src/jobs/queue-kit.js';
import { keepMaintenanceScheduled, MAINTENANCE_QUEUE } from '../../src/jobs/maintenance-job.js';
import { createTestDatabase } from '../helpers/db.js';
import { hasRedisServer, startPrivateRedis, type PrivateRedis } from './private-redis.js';

if (!hasRedisServer)
  console.warn('[faults/redis-data-loss] no redis-server binary: these cases are SKIPPED.');

/**
 * docs/operations.md#failure-behaviour: after Redis loses its data (FLUSHALL on a private redis-server, as a failover
 * to an empty replica would), the maintenance scheduler is back without a worker restart.
 */
describe.skipIf(!hasRedisServer)('maintenance after Redis data loss', () => {
  let redis: PrivateRedis;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let queues: QueueKit;
  let stop: () => void = () => undefined;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    db = await createTestDatabase();
    queues = createQueueKit({ redisUrl: redis.url, databaseUrl: db.url, namespace: 'loss' });
  });
  afterAll(async () => {
    stop();
    await queues?.close();
    await redis?.kill();
    await db?.drop();
  });

  it('re-asserts the scheduler after FLUSHALL, without a restart', { timeout: 15_000 }, async () => {
    stop = keepMaintenanceScheduled(queues, { everyMs: 200 });
    const observer = new Queue(MAINTENANCE_QUEUE, { connection: { url: redis.url }, prefix: 'loss' });
    const admin = new Redis(redis.url);
    try {
      const schedulers = async () => (await observer.getJobSchedulers()).map((s) => s.key);
      await expect.poll(schedulers, { timeout: 5_000 }).toContain('maintenance-every-minute');
      await admin.flushall();
      expect(await schedulers()).toEqual([]);
      await expect.poll(schedulers, { timeout: 5_000 }).toContain('maintenance-every-minute');
    } finally {
      await observer.close();
      admin.disconnect();
    }
  });
});
