import { describe, expect, it } from 'vitest';
import { effectivePlan, monthOf, nextMonthStart } from '../../../src/domain/plans/plans.js';
import { loadConfig } from '../../../src/lib/config.js';

const { plans } = loadConfig({});
const created = new Date('2026-03-01T10:00:00Z');
const trialEndsAt = new Date(created.getTime() + 14 * 86_400_000);

describe('plans', () => {
  it('a trial is the service plan with the days left, until it ends', () => {
    const p = effectivePlan({ plan: 'trial', trialEndsAt }, plans, new Date(created.getTime() + 86_400_000));
    expect(p).toMatchObject({ plan: 'trial', trialDaysLeft: 13, limits: plans.service });
  });

  it('a workspace whose trial ended is on free, by the clock alone', () => {
    const p = effectivePlan({ plan: 'trial', trialEndsAt }, plans, trialEndsAt);
    expect(p).toMatchObject({ plan: 'free', trialDaysLeft: 0, limits: plans.free });
  });

  it('has the docs/api.md#plans-and-quotas defaults', () => {
    expect(plans.free).toMatchObject({
      aiCallsPerMonth: 100,
      requestsPerMinute: 60,
      batchMaxItems: 100,
      scanMaxBytes: 100 * 1024 * 1024,
    });
    expect(plans.service).toMatchObject({
      aiCallsPerMonth: 50_000,
      requestsPerMinute: 600,
      batchMaxItems: 1000,
      scanMaxBytes: 2 * 1024 ** 3,
    });
  });

  it('uses calendar months in UTC', () => {
    expect(monthOf(new Date('2026-12-31T23:59:59Z'))).toBe('2026-12-01');
    expect(nextMonthStart(new Date('2026-12-31T23:59:59Z')).toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });
});

describe('configuration', () => {
  it('names every bad variable', () => {
    expect(() =>
      loadConfig({
        PORT: 'eighty',
        REDIS_URL: 'http://x',
        DATABASE_URL: 'postgres://h/db',
        LOG_LEVEL: 'loud',
      }),
    ).toThrowError(
      /PORT: expected a whole number[\s\S]*REDIS_URL: expected a redis: or rediss: URL[\s\S]*KEY_PEPPER: required[\s\S]*LOG_LEVEL/,
    );
  });

  it('requires KEY_PEPPER with DATABASE_URL, of at least 32 characters', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://h/db' })).toThrowError(/KEY_PEPPER: required/);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://h/db', KEY_PEPPER: 'short' })).toThrowError(
      /KEY_PEPPER: must be at least 32/,
    );
  });

  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: null,
      redisUrl: null,
      scanMaxBytes: 2 * 1024 ** 3,
    });
    expect(c.models.map((m) => m.id)).toEqual(['svc-triage-v1', 'svc-triage-routine']);
    expect(c.batchItemRetry).toEqual({ attempts: 5, backoffMs: 1000 });
  });

  it('reads the batch item retry, within bounds', () => {
    expect(loadConfig({ BATCH_ITEM_ATTEMPTS: '2', BATCH_ITEM_BACKOFF_MS: '250' }).batchItemRetry).toEqual({
      attempts: 2,
      backoffMs: 250,
    });
    expect(() => loadConfig({ BATCH_ITEM_ATTEMPTS: '0' })).toThrowError(/BATCH_ITEM_ATTEMPTS/);
  });
});
