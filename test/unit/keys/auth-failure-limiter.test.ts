import { describe, expect, it } from 'vitest';
import { createAuthFailureLimiter } from '../../../src/domain/keys/auth-failure-limiter.js';

/** The failed-authentication limiter's rule: free lookups up to the limit, then paced ones. */
describe('the failed-authentication limiter', () => {
  const setup = (overLimitPerSecond?: number) => {
    let now = 0;
    const limiter = createAuthFailureLimiter({
      limit: 3,
      windowMs: 60_000,
      ...(overLimitPerSecond ? { overLimitPerSecond } : {}),
      now: () => now,
    });
    return { limiter, advance: (ms: number) => (now += ms) };
  };

  it('admits every lookup below the limit, then paces them at overLimitPerSecond with a one-second burst', () => {
    const { limiter, advance } = setup(2);
    for (let i = 0; i < 3; i++) {
      expect(limiter.admitLookup('a')).toBe(0);
      limiter.recordFailure('a');
    }
    expect([limiter.admitLookup('a'), limiter.admitLookup('a')]).toEqual([0, 0]);
    expect(limiter.admitLookup('a')).toBe(500);
    advance(250);
    expect(limiter.admitLookup('a')).toBe(250);
    advance(250);
    expect(limiter.admitLookup('a')).toBe(0);
    expect(limiter.admitLookup('b')).toBe(0);
  });

  it('paces at limit / 6 a second by default, at least one, and forgets a client when its window ends', () => {
    const { limiter, advance } = setup();
    for (let i = 0; i < 3; i++) limiter.recordFailure('a');
    expect(limiter.admitLookup('a')).toBe(0);
    expect(limiter.admitLookup('a')).toBe(1_000);
    advance(60_000);
    expect(limiter.admitLookup('a')).toBe(0);
    expect(limiter.admitLookup('a')).toBe(0);
  });

  it('never asks a client to wait past the end of its window', () => {
    const { limiter, advance } = setup(1 / 120);
    for (let i = 0; i < 3; i++) limiter.recordFailure('a');
    advance(59_000);
    expect(limiter.admitLookup('a')).toBe(0);
    expect(limiter.admitLookup('a')).toBe(1_000);
  });
});
