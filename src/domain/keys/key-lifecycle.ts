import type { KeyState } from '../../db/entities/index.js';

/** Rules of key states, expiry and rotation health (docs/api.md#keys), as pure functions. */
export const EXPIRY_DAYS = [30, 60, 90, 180, 365] as const;
export const DEFAULT_GRACE_HOURS = 24;
export const MAX_GRACE_HOURS = 7 * 24;
const DAY_MS = 86_400_000;

export interface KeyTimes {
  state: KeyState;
  expiresAt: Date | null;
  graceEndsAt: Date | null;
}

/**
 * The state a key is in at `now`: a stored `active` or `rotating` key whose expiry or
 * grace period has passed is `expired`, whether or not a sweeper has written that yet.
 */
export function effectiveKeyState(key: KeyTimes, now: Date): KeyState {
  if (key.state === 'revoked' || key.state === 'expired') return key.state;
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return 'expired';
  if (key.state === 'rotating' && key.graceEndsAt && key.graceEndsAt.getTime() <= now.getTime())
    return 'expired';
  return key.state;
}

/** Only `active` and `rotating` keys authenticate. */
export function authenticates(state: KeyState): boolean {
  return state === 'active' || state === 'rotating';
}

export type RotationHealth = 'healthy' | 'due' | 'overdue';

/** `healthy` until 14 days before the policy age, `due` in those 14 days, `overdue` after. */
export function rotationHealth(createdAt: Date, policyDays: number, now: Date): RotationHealth {
  const ageDays = (now.getTime() - createdAt.getTime()) / DAY_MS;
  if (ageDays >= policyDays) return 'overdue';
  if (ageDays >= policyDays - 14) return 'due';
  return 'healthy';
}

export type ExpiryChoice = 'never' | (typeof EXPIRY_DAYS)[number] | { date: Date };

/**
 * Reads an expiry option: `"never"` or null, a number of days from {30, 60, 90, 180, 365},
 * or an ISO date in the future. Returns an error message for anything else.
 */
export function parseExpiry(value: unknown, now: Date): { expiresAt: Date | null } | { error: string } {
  if (value === undefined || value === null || value === 'never') return { expiresAt: null };
  if (typeof value === 'number') {
    if ((EXPIRY_DAYS as readonly number[]).includes(value))
      return { expiresAt: new Date(now.getTime() + value * DAY_MS) };
    return { error: `must be "never", one of ${EXPIRY_DAYS.join(', ')} days, or a future ISO 8601 date` };
  }
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2})?)?$/.test(value)) {
    const date = new Date(value);
    if (!Number.isNaN(date.getTime()) && date.getTime() > now.getTime()) return { expiresAt: date };
  }
  return { error: `must be "never", one of ${EXPIRY_DAYS.join(', ')} days, or a future ISO 8601 date` };
}

export function graceEnd(now: Date, graceHours: number): Date {
  return new Date(now.getTime() + graceHours * 3_600_000);
}
