import { describe, expect, it } from 'vitest';
import { refillAt } from '../../../src/domain/usage/ai-call-leases.js';

describe('refillAt', () => {
  it.each([
    // size, calls a ms, reservation ms → calls left that start the next reservation
    [25, 0, 0, 6], // no pace known: a quarter
    [25, 0.01, 5, 6], // sparse (10 a second): a quarter
    [25, 0.2, 5, 6], // 200 a second, 5 ms: 2 calls' worth, still a quarter
    [25, 1, 5, 10], // 1,000 a second, 5 ms: 10 calls
    [25, 1, 10, 20],
    [25, 1, 30, 25], // never more than the whole lease ahead
    [25, Number.POSITIVE_INFINITY, 2, 25], // spent back to back
    [3, 1, 10, 0], // under 4 calls: the lease is spent first
  ])('a lease of %i at %f calls/ms and %i ms a reservation refills at %i left', (size, pace, ms, left) => {
    expect(refillAt(size, pace, ms)).toBe(left);
  });
});
