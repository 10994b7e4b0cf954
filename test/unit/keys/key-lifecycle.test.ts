import { describe, expect, it } from 'vitest';
import { effectiveKeyState, parseExpiry, rotationHealth } from '../../../src/domain/keys/key-lifecycle.js';

const now = new Date('2026-06-15T12:00:00Z');
const days = (n: number) => new Date(now.getTime() + n * 86_400_000);

describe('key states', () => {
  it.each([
    ['active, no expiry', { state: 'active', expiresAt: null, graceEndsAt: null }, 'active'],
    ['active, expiry ahead', { state: 'active', expiresAt: days(1), graceEndsAt: null }, 'active'],
    ['active, expiry passed', { state: 'active', expiresAt: days(-1), graceEndsAt: null }, 'expired'],
    ['active, expires exactly now', { state: 'active', expiresAt: now, graceEndsAt: null }, 'expired'],
    ['rotating within grace', { state: 'rotating', expiresAt: null, graceEndsAt: days(1) }, 'rotating'],
    ['rotating after grace', { state: 'rotating', expiresAt: null, graceEndsAt: days(-0.01) }, 'expired'],
    ['revoked stays revoked', { state: 'revoked', expiresAt: days(-5), graceEndsAt: null }, 'revoked'],
    ['expired stays expired', { state: 'expired', expiresAt: null, graceEndsAt: null }, 'expired'],
  ] as const)('%s', (_name, key, expected) => {
    expect(effectiveKeyState({ ...key }, now)).toBe(expected);
  });
});

describe('rotation health (policy 90 days)', () => {
  it.each([
    [0, 'healthy'],
    [75.9, 'healthy'],
    [76, 'due'],
    [89.9, 'due'],
    [90, 'overdue'],
    [400, 'overdue'],
  ] as const)('a key %s days old is %s', (age, expected) => {
    expect(rotationHealth(days(-age), 90, now)).toBe(expected);
  });
});

describe('expiry options', () => {
  it.each([
    [undefined, null],
    [null, null],
    ['never', null],
    [30, days(30)],
    [365, days(365)],
    ['2027-01-01', new Date('2027-01-01')],
  ])('%s', (input, expected) => {
    expect(parseExpiry(input, now)).toEqual({ expiresAt: expected });
  });

  it.each([[7], [0], [-30], ['2020-01-01'], ['tomorrow'], [{}]])('rejects %s', (input) => {
    expect(parseExpiry(input, now)).toHaveProperty('error');
  });
});
