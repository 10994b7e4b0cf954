import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/test-app.js';
import { testRedisUrl } from '../../helpers/db.js';
import {
  createPgWindowCounter,
  createRateLimiter,
  createRedisWindowCounter,
  type WindowCounter,
} from '../../../src/domain/usage/rate-limiter.js';

const redisUrl = testRedisUrl();
if (!redisUrl) console.warn('[window-counter.test] Redis not reachable: the Redis case is SKIPPED.');

/** The shared counts behind request limits, in the real stores, with two limiters as two processes. */
describe('window counters', () => {
  let t: TestApp;
  let redis: Redis | null = null;
  beforeAll(async () => {
    t = await startTestApp();
    if (redisUrl) redis = new Redis(redisUrl);
  });
  afterAll(async () => {
    redis?.disconnect();
    await t.close();
  });

  async function check(counter: WindowCounter) {
    const bucket = `test:${randomBytes(4).toString('hex')}`;
    const start = Date.now() - (Date.now() % 60_000);
    expect(await counter.add(bucket, start, 3, 60_000)).toBe(3);
    expect(await counter.add(bucket, start, 2, 60_000)).toBe(5);
    expect(await counter.add(bucket, start + 60_000, 1, 60_000)).toBe(1); // the next window

    const other = `test:${randomBytes(4).toString('hex')}`;
    const a = createRateLimiter(counter, { clock: () => start + 1_000 });
    const b = createRateLimiter(counter, { clock: () => start + 1_000 });
    const results = await Promise.all(Array.from({ length: 400 }, (_, i) => (i % 2 ? a : b).hit(other, 300)));
    const allowed = results.filter((d) => d.allowed).length;
    expect(allowed).toBeLessThanOrEqual(300);
    expect(allowed).toBeGreaterThanOrEqual(300 - 2 * 6);
  }

  it('add up on PostgreSQL, and two limiters never pass more than the limit', async () => {
    await check(createPgWindowCounter(t.infra.pool));
  });

  it.skipIf(!redisUrl)('add up on Redis, and two limiters never pass more than the limit', async () => {
    await check(createRedisWindowCounter(redis!, `t${randomBytes(4).toString('hex')}`));
  });
});
