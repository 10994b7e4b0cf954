import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProviderLimiter,
  LimiterAbortedError,
} from '../../../src/domain/triage-engine/providers/rate-limiter.js';

async function timeJobs(
  limiter: ReturnType<typeof createProviderLimiter>,
  weights: number[],
): Promise<number[]> {
  const t0 = Date.now();
  return Promise.all(weights.map((w) => limiter.schedule(w, () => Promise.resolve(Date.now() - t0))));
}

describe('createProviderLimiter (in-process)', () => {
  it('holds the request beyond requestsPerMinute until the reservoir refreshes', async () => {
    const limiter = createProviderLimiter({
      id: 'rpm-test',
      requestsPerMinute: 2,
      tokensPerMinute: 1e6,
      intervalMs: 400,
    });
    const times = await timeJobs(limiter, [1, 1, 1]);
    await limiter.close();
    expect(times[0]).toBeLessThan(150);
    expect(times[1]).toBeLessThan(150);
    expect(times[2]).toBeGreaterThanOrEqual(250);
  });

  it('weighs jobs by their tokens against tokensPerMinute', async () => {
    const limiter = createProviderLimiter({
      id: 'tpm-test',
      requestsPerMinute: 100,
      tokensPerMinute: 1000,
      intervalMs: 400,
    });
    const times = await timeJobs(limiter, [600, 600]);
    await limiter.close();
    expect(times[0]).toBeLessThan(150);
    expect(times[1]).toBeGreaterThanOrEqual(250);
  });

  it('rejects a waiting job when the caller aborts', async () => {
    const limiter = createProviderLimiter({
      id: 'abort-test',
      requestsPerMinute: 1,
      tokensPerMinute: 1e6,
      intervalMs: 10_000,
    });
    await limiter.schedule(1, () => Promise.resolve());
    const controller = new AbortController();
    const waiting = limiter.schedule(1, () => Promise.resolve('ran'), controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(LimiterAbortedError);
    await limiter.close();
  });
});

const hasRedis = spawnSync('redis-server', ['--version']).status === 0;

describe.skipIf(!hasRedis)('createProviderLimiter with Redis clustering', () => {
  let redis: ChildProcess;
  let url: string;
  beforeAll(async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    redis = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    url = `redis://127.0.0.1:${port}`;
    await new Promise((r) => setTimeout(r, 300));
  });
  afterAll(() => {
    redis.kill('SIGTERM');
  });

  it('shares one reservoir between two limiters (two processes) with the same id', async () => {
    const id = `shared-${Date.now()}`;
    const a = createProviderLimiter({
      id,
      requestsPerMinute: 2,
      tokensPerMinute: 1e6,
      intervalMs: 60_000,
      redis: url,
    });
    const b = createProviderLimiter({
      id,
      requestsPerMinute: 2,
      tokensPerMinute: 1e6,
      intervalMs: 60_000,
      redis: url,
    });
    await a.schedule(1, () => Promise.resolve());
    await b.schedule(1, () => Promise.resolve());
    // Both slots of the shared minute are spent: a third job from either side must wait.
    const controller = new AbortController();
    const third = b.schedule(1, () => Promise.resolve('ran'), controller.signal);
    const outcome = await Promise.race([third, new Promise((r) => setTimeout(() => r('waiting'), 500))]);
    expect(outcome).toBe('waiting');
    controller.abort();
    await expect(third).rejects.toBeInstanceOf(LimiterAbortedError);
    // A limiter with a different id is not affected.
    const other = createProviderLimiter({
      id: `${id}-other`,
      requestsPerMinute: 2,
      tokensPerMinute: 1e6,
      redis: url,
    });
    await expect(other.schedule(1, () => Promise.resolve('ran'))).resolves.toBe('ran');
    await Promise.all([a.close(), b.close(), other.close()]);
  });
});
