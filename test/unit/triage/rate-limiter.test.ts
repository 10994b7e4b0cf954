import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProviderLimiter,
  LimiterAbortedError,
  LimiterBusyError,
} from '../../../src/domain/triage-engine/providers/rate-limiter.js';

/** The fixed window (of `intervalMs`, aligned to the clock) each job ran in. */
async function windowsOf(
  limiter: ReturnType<typeof createProviderLimiter>,
  weights: number[],
  intervalMs: number,
): Promise<number[]> {
  return Promise.all(
    weights.map((w) => limiter.schedule(w, () => Promise.resolve(Math.floor(Date.now() / intervalMs)))),
  );
}

describe('createProviderLimiter (in-process)', () => {
  it('holds the request beyond requestsPerMinute until the next window', async () => {
    const limiter = createProviderLimiter({
      id: 'rpm-test',
      requestsPerMinute: 2,
      tokensPerMinute: 1e6,
      intervalMs: 400,
    });
    const windows = await windowsOf(limiter, [1, 1, 1], 400);
    await limiter.close();
    expect(windows[2]).toBeGreaterThan(windows[0]!);
  });

  it('weighs jobs by their tokens against tokensPerMinute', async () => {
    const limiter = createProviderLimiter({
      id: 'tpm-test',
      requestsPerMinute: 100,
      tokensPerMinute: 1000,
      intervalMs: 400,
    });
    const windows = await windowsOf(limiter, [600, 600], 400);
    await limiter.close();
    expect(windows[1]).toBeGreaterThan(windows[0]!);
  });

  it('rejects a waiting job when the caller aborts', async () => {
    const limiter = createProviderLimiter({
      id: 'abort-test',
      requestsPerMinute: 1,
      tokensPerMinute: 1e6,
      intervalMs: 10_000,
      maxWaitMs: 60_000,
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
      maxWaitMs: 120_000,
      redis: url,
    });
    const b = createProviderLimiter({
      id,
      requestsPerMinute: 2,
      tokensPerMinute: 1e6,
      intervalMs: 60_000,
      maxWaitMs: 120_000,
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

const LIMITS = [1, 500, 1e6, 3e7, 1e9];

/** docs/api.md#rate-limits: any limit from 1 to 10⁹ works, in one process and shared through Redis. */
async function expectLimitHolds(limit: number, redis?: string): Promise<void> {
  const limiter = createProviderLimiter({
    id: `limit-${limit}-${Math.random().toString(36).slice(2)}`,
    requestsPerMinute: Math.min(limit, 500),
    tokensPerMinute: limit,
    intervalMs: 60_000,
    maxWaitMs: 100,
    ...(redis === undefined ? {} : { redis }),
  });
  try {
    // The whole minute's tokens in one call, then a call of one token more.
    await expect(limiter.schedule(limit, () => Promise.resolve('ran'))).resolves.toBe('ran');
    await expect(limiter.schedule(1, () => Promise.resolve('ran'))).rejects.toBeInstanceOf(LimiterBusyError);
    if (limit === 500) {
      const requests = createProviderLimiter({
        id: `rpm-${Math.random().toString(36).slice(2)}`,
        requestsPerMinute: 500,
        tokensPerMinute: 1e9,
        maxWaitMs: 100,
        ...(redis === undefined ? {} : { redis }),
      });
      for (let i = 0; i < 500; i++) await requests.schedule(1, () => Promise.resolve());
      await expect(requests.schedule(1, () => Promise.resolve())).rejects.toBeInstanceOf(LimiterBusyError);
      await requests.close();
    }
  } finally {
    await limiter.close();
  }
}

describe('provider limits at every scale, waits bounded (in-process)', () => {
  for (const limit of LIMITS) {
    it(`applies a limit of ${limit}`, () => expectLimitHolds(limit));
  }

  it('refuses with the time to wait instead of queueing past maxWaitMs', async () => {
    const limiter = createProviderLimiter({
      id: 'busy',
      requestsPerMinute: 1,
      tokensPerMinute: 1e6,
      maxWaitMs: 50,
    });
    await limiter.schedule(1, () => Promise.resolve());
    const refused = await limiter.schedule(1, () => Promise.resolve()).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LimiterBusyError);
    expect((refused as LimiterBusyError).retryAfterMs).toBeGreaterThan(50);
    await limiter.close();
  });

  it.each([
    ['OpenAI', { 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '6m0s' }],
    ['OpenAI requests', { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '20s' }],
    [
      'Anthropic',
      {
        'anthropic-ratelimit-tokens-remaining': '0',
        'anthropic-ratelimit-tokens-reset': new Date(Date.now() + 30_000).toISOString(),
      },
    ],
  ])('slows down when the provider says nothing is left (%s headers)', async (_name, headers) => {
    const limiter = createProviderLimiter({
      id: 'hdr',
      requestsPerMinute: 100,
      tokensPerMinute: 1e6,
      maxWaitMs: 50,
    });
    limiter.observe?.(new Headers({ 'x-ratelimit-remaining-tokens': '5000' }));
    await expect(limiter.schedule(1, () => Promise.resolve('ran'))).resolves.toBe('ran');
    limiter.observe?.(new Headers(headers));
    await expect(limiter.schedule(1, () => Promise.resolve('ran'))).rejects.toBeInstanceOf(LimiterBusyError);
    await limiter.close();
  });
});

describe.skipIf(!hasRedis)('provider limits shared through Redis', () => {
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
      {
        stdio: 'ignore',
      },
    );
    url = `redis://127.0.0.1:${port}`;
    await new Promise((r) => setTimeout(r, 300));
  });
  afterAll(() => {
    redis.kill('SIGTERM');
  });

  for (const limit of LIMITS) {
    it(`applies a limit of ${limit}`, () => expectLimitHolds(limit, url));
  }

  it('a rolling deploy that raises the limit: both processes converge on the newest configuration', async () => {
    const id = `deploy-${Date.now()}`;
    const seen: number[] = [];
    const old = createProviderLimiter({
      id,
      requestsPerMinute: 500,
      tokensPerMinute: 200_000,
      redis: url,
      offeredAt: 1,
      maxWaitMs: 100,
      onLimits: (inForce) => seen.push(inForce.tokensPerMinute),
    });
    await old.schedule(1_000, () => Promise.resolve());
    const raised = createProviderLimiter({
      id,
      requestsPerMinute: 500,
      tokensPerMinute: 30_000_000,
      redis: url,
      offeredAt: 2,
      maxWaitMs: 100,
    });
    // It used to take blocks of 600,000 from a shared reservoir of 200,000 and wait for ever.
    await expect(raised.schedule(600_000, () => Promise.resolve('ran'))).resolves.toBe('ran');
    // The old process learns the newer limit on its next take from the window, and logs it.
    await expect(old.schedule(1_000_000, () => Promise.resolve('ran'))).resolves.toBe('ran');
    expect(seen).toContain(30_000_000);
    // A process that restarts with the old configuration does not win it back.
    const stale = createProviderLimiter({
      id,
      requestsPerMinute: 500,
      tokensPerMinute: 200_000,
      redis: url,
      offeredAt: 1,
      maxWaitMs: 100,
    });
    await expect(stale.schedule(1_000_000, () => Promise.resolve('ran'))).resolves.toBe('ran');
    await Promise.all([old.close(), raised.close(), stale.close()]);
  });
});
