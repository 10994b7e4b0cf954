import { describe, expect, it } from 'vitest';
import { capacityWaitMs } from '../../../src/domain/triage/batch-processor.js';

/** docs/triage.md#waiting-for-model-capacity: until capacity returns, never past the batch's deadline. */
describe('capacityWaitMs', () => {
  const accepted = new Date('2026-11-27T08:00:00Z');
  const at = (ms: number) => new Date(accepted.getTime() + ms);

  it.each([
    { name: 'waits until the window reopens', now: 10_000, deadline: 60_000, retryAfter: 5_000, wait: 5_000 },
    {
      name: 'stops at the deadline, for one last try',
      now: 58_000,
      deadline: 60_000,
      retryAfter: 5_000,
      wait: 2_000,
    },
    { name: 'waits at least a millisecond', now: 10_000, deadline: 60_000, retryAfter: 0, wait: 1 },
    {
      name: 'has no wait left at the deadline',
      now: 60_000,
      deadline: 60_000,
      retryAfter: 5_000,
      wait: null,
    },
    {
      name: 'has no wait left past the deadline',
      now: 90_000,
      deadline: 60_000,
      retryAfter: 5_000,
      wait: null,
    },
  ])('$name', ({ now, deadline, retryAfter, wait }) => {
    expect(capacityWaitMs(accepted, at(now), deadline, retryAfter)).toBe(wait);
  });
});
