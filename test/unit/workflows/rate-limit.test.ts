import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RATE_LIMITS,
  JITTER_GUARD_MS,
  localPacer,
  nextSlot,
  rateLimitOf,
  spacingMs,
} from '../../../src/domain/workflows/rate-limit.js';

describe('workflow rate limits', () => {
  it('spaces calls so that no period holds more than its requests, with the jitter guard', () => {
    expect(spacingMs({ requests: 10, perSeconds: 1 })).toBe(Math.ceil((1000 + JITTER_GUARD_MS) / 10));
    expect(spacingMs({ requests: 60, perSeconds: 60 })).toBeGreaterThanOrEqual(1000);
    for (const limit of [
      { requests: 3, perSeconds: 1 },
      { requests: 7, perSeconds: 2 },
      { requests: 1000, perSeconds: 1 },
    ])
      expect(spacingMs(limit) * limit.requests).toBeGreaterThanOrEqual(limit.perSeconds * 1000);
  });

  it('grants the next slot within the wait allowed, refuses a later one without taking it', () => {
    expect(nextSlot(0, 1000, 100, 500)).toEqual({ granted: true, waitMs: 0, tat: 1100 });
    expect(nextSlot(1300, 1000, 100, 500)).toEqual({ granted: true, waitMs: 300, tat: 1400 });
    expect(nextSlot(1600, 1000, 100, 500)).toEqual({ granted: false, waitMs: 600, tat: 1600 });
  });

  it('a burst through the local pacer: slots one spacing apart, the ones too far refused', async () => {
    let now = 10_000;
    const pacer = localPacer(() => now);
    const slots = [];
    for (let i = 0; i < 5; i++) slots.push(await pacer.reserve('wf', 100, 250));
    expect(slots).toEqual([
      { granted: true, waitMs: 0 },
      { granted: true, waitMs: 100 },
      { granted: true, waitMs: 200 },
      { granted: false, waitMs: 300 },
      { granted: false, waitMs: 300 },
    ]);
    expect(await pacer.reserve('other', 100, 250)).toEqual({ granted: true, waitMs: 0 });
    now += 300;
    expect(await pacer.reserve('wf', 100, 250)).toEqual({ granted: true, waitMs: 0 });
  });

  it('defaults per kind when a target has none', () => {
    expect(rateLimitOf({ kind: 'webhook', url: 'https://x.test' })).toEqual(DEFAULT_RATE_LIMITS.webhook);
    expect(
      rateLimitOf({ kind: 'webhook', url: 'https://x.test', rateLimit: { requests: 1, perSeconds: 5 } }),
    ).toEqual({ requests: 1, perSeconds: 5 });
  });
});
