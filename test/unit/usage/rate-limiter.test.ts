import { describe, expect, it } from 'vitest';
import { createRateLimiter, type WindowCounter } from '../../../src/domain/usage/rate-limiter.js';

/** The shared store as Redis or PostgreSQL keep it: one total per bucket and window. */
function sharedCounter(): WindowCounter & { calls: number; totals: Map<string, number> } {
  const totals = new Map<string, number>();
  const c = {
    calls: 0,
    totals,
    async add(bucket: string, windowStart: number, n: number) {
      c.calls++;
      await new Promise((r) => setImmediate(r)); // a round trip
      const key = `${bucket}@${windowStart}`;
      totals.set(key, (totals.get(key) ?? 0) + n);
      return totals.get(key)!;
    },
  };
  return c;
}

describe('rate limiter over a shared window counter', () => {
  it('counts every request against a small limit exactly, with the headers of each', async () => {
    const counter = sharedCounter();
    const now = 120_000;
    const limiter = createRateLimiter(counter, { clock: () => now });
    const decisions = [];
    for (let i = 0; i < 7; i++) decisions.push(await limiter.hit('key:a', 5));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0]);
    expect(decisions[0]!.resetMs).toBe(60_000);
    // Below 50 a minute a lease is one hit; once the window is found spent, it is refused
    // locally until it ends.
    expect(counter.calls).toBe(6);
  });

  it('spends leases locally for large limits: far fewer round trips, never more than the limit across processes', async () => {
    const counter = sharedCounter();
    let now = 0;
    const processes = [0, 1, 2].map(() => createRateLimiter(counter, { clock: () => now }));
    const results = await Promise.all(
      Array.from({ length: 1500 }, (_, i) => processes[i % 3]!.hit('key:b', 1000)),
    );
    const allowed = results.filter((d) => d.allowed).length;
    expect(allowed).toBeLessThanOrEqual(1000);
    expect(allowed).toBeGreaterThanOrEqual(1000 - 3 * 20); // at most one unused lease per process
    expect(counter.calls).toBeLessThan(200);

    now += 60_000; // a new window starts from zero
    expect((await processes[0]!.hit('key:b', 1000)).allowed).toBe(true);
  });

  it('keeps buckets apart', async () => {
    const counter = sharedCounter();
    const limiter = createRateLimiter(counter, { clock: () => 0 });
    for (let i = 0; i < 3; i++) await limiter.hit('key:a', 3);
    expect((await limiter.hit('key:a', 3)).allowed).toBe(false);
    expect((await limiter.hit('key:b', 3)).allowed).toBe(true);
  });
});
