import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../helpers/test-app.js';
import {
  multipartBody,
  scanCount,
  startScanApp,
  storedFiles,
  type ScanTestApp,
} from '../helpers/scan-app.js';
import { hasRedisServer, startPrivateRedis, type PrivateRedis } from './private-redis.js';
import { AppError } from '../../src/lib/errors.js';

if (!hasRedisServer)
  console.warn('[faults/redis-down-writes] no redis-server binary: these cases are SKIPPED.');

/*
 * docs/operations.md#failure-behaviour: with Redis gone, a step that enqueues has a deadline. The queue connection
 * retries for ever (BullMQ's workers need `maxRetriesPerRequest: null`), so an `add` used to wait
 * until Redis came back: a console upload (no per-key rate limit in front of it) hung. Now the
 * add fails within its deadline, the upload is withdrawn (no scan, no file) and the answer is
 * 503 `overloaded` with Retry-After, never a 500 or a hang.
 */
describe.skipIf(!hasRedisServer)('Redis down: steps that enqueue', () => {
  let redis: PrivateRedis;
  let t: ScanTestApp;
  let user: Awaited<ReturnType<typeof signUp>>;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    t = await startScanApp({ redisUrl: redis.url, worker: false });
    user = await signUp(t.app);
    await redis.kill();
  });
  afterAll(async () => {
    // Back up first: a BullMQ queue opened while Redis was down waits for it to close.
    await redis?.start();
    await t?.close();
    await redis?.kill();
  });

  it('a queue add fails with 503 overloaded within its deadline', { timeout: 10_000 }, async () => {
    const started = Date.now();
    const err = await t.infra.queues
      .queue<{ n: number }>('redis-down-probe')
      .add('x', { n: 1 })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'overloaded', options: { headers: { 'Retry-After': '5' } } });
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it(
    'an export job that cannot be queued is withdrawn: 503 overloaded, no export row',
    { timeout: 10_000 },
    async () => {
      const err = await t.deps.exports
        .create({
          workspaceId: user.workspaceId,
          keyId: user.keyId,
          subject: 'cases',
          format: 'csv',
          filter: {},
        })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'overloaded', options: { headers: { 'Retry-After': '5' } } });
      const { rows } = await t.infra.pool.query(
        `SELECT count(*)::int AS n FROM exports WHERE workspace_id = $1`,
        [user.workspaceId],
      );
      expect(rows[0].n).toBe(0);
    },
  );

  it(
    'a console upload answers 503 overloaded with Retry-After and keeps nothing',
    { timeout: 15_000 },
    async () => {
      const scan = readFileSync(path.resolve('test/fixtures/scans/nessus/nessus_v_unknown.xml'));
      const { body, contentType } = multipartBody([{ name: 'file', filename: 'scan.nessus', body: scan }]);
      const started = Date.now();
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/console/scans',
        headers: { cookie: user.cookie, 'x-csrf-token': user.csrf, 'content-type': contentType },
        payload: body,
      });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.json()).toMatchObject({ status: 503, code: 'overloaded' });
      expect(Date.now() - started).toBeLessThan(6_000);
      expect(await scanCount(t, user.workspaceId)).toBe(0);
      expect(await storedFiles(t, user.workspaceId)).toEqual([]);
    },
  );
});
