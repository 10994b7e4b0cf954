import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUp, startTestApp, type TestApp } from '../helpers/test-app.js';
import { hasRedisServer, startPrivateRedis, type PrivateRedis } from './private-redis.js';

if (!hasRedisServer) console.warn('[faults/redis-down] no redis-server binary: these cases are SKIPPED.');

/**
 * docs/operations.md#failure-behaviour: with its Redis gone, the app answers 503 `overloaded` with Retry-After on the
 * routes that need Redis (not 500, not a hang), /readyz answers 503 within its deadline, and
 * a state change that committed in PostgreSQL answers success even though its invalidation
 * message could not be published. Each case is bounded by the test timeout.
 */
describe.skipIf(!hasRedisServer)('Redis down', () => {
  let redis: PrivateRedis;
  let t: TestApp;
  let user: Awaited<ReturnType<typeof signUp>>;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    t = await startTestApp({ redisUrl: redis.url });
    user = await signUp(t.app);
    const me = await t.app.inject({
      method: 'GET',
      url: '/api/v1/keys/me',
      headers: { 'x-api-key': user.key },
    });
    expect(me.statusCode).toBe(200);
    await redis.kill();
  });
  afterAll(async () => {
    await t?.close();
    await redis?.kill();
  });

  it('answers 503 overloaded with Retry-After where a request needs Redis', { timeout: 20_000 }, async () => {
    let res;
    for (let i = 0; i < 200; i++) {
      res = await t.app.inject({ method: 'GET', url: '/api/v1/keys/me', headers: { 'x-api-key': user.key } });
      if (res.statusCode !== 200) break;
    }
    expect(res!.statusCode).toBe(503);
    expect(res!.headers['retry-after']).toBe('5');
    expect(res!.json()).toMatchObject({ status: 503, code: 'overloaded' });
  });

  it('answers /readyz 503 within its own deadline', { timeout: 10_000 }, async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json()).toMatchObject({ status: 503, code: 'overloaded' });
  });

  it(
    'answers a committed console revoke with success even though the publish failed',
    { timeout: 10_000 },
    async () => {
      const other = await createKey(t.app, user, ['usage:read'], 'second');
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/console/keys/${other.id}/revoke`,
        headers: { cookie: user.cookie, 'x-csrf-token': user.csrf },
        payload: {},
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: other.id });
      const refused = await t.app.inject({
        method: 'GET',
        url: '/api/v1/keys/me',
        headers: { 'x-api-key': other.key },
      });
      expect(refused.statusCode).toBe(401);
    },
  );
});
