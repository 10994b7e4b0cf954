import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../../src/domain/keys/key-format.js';
import { signUp, startTestApp, type TestApp } from '../../helpers/test-app.js';

/**
 * docs/operations.md#failure-behaviour: keys that pass the checksum but match no row each cost a database lookup.
 * A flood of them from one address must cost no more than a flood of malformed keys: a
 * bounded number of lookups, then 429 `rate_limited` with Retry-After for that address,
 * while another address and a key already verified from the flooding one still work.
 */
const LIMIT = 10;

describe('a flood of forged keys', () => {
  let t: TestApp;
  let lookups = 0;

  beforeAll(async () => {
    t = await startTestApp({ env: { AUTH_FAILURES_PER_MINUTE: String(LIMIT) } });
    const query = t.infra.pool.query.bind(t.infra.pool) as (...args: unknown[]) => Promise<unknown>;
    (t.infra.pool as unknown as { query: typeof query }).query = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && args[0].includes('WHERE k.key_hash = $1')) lookups++;
      return query(...args);
    };
  });
  afterAll(async () => t?.close());

  const get = (key: string, remoteAddress: string) =>
    t.app.inject({ method: 'GET', url: '/api/v1/keys/me', headers: { 'x-api-key': key }, remoteAddress });

  it('bounds the lookups, then answers 429 rate_limited with Retry-After for that address', async () => {
    const user = await signUp(t.app);
    expect((await get(user.key, '10.0.0.7')).statusCode).toBe(200); // verified and cached
    lookups = 0;

    const statuses: number[] = [];
    for (let i = 0; i < 5 * LIMIT; i++) statuses.push((await get(generateApiKey(), '10.0.0.7')).statusCode);
    expect(lookups).toBe(LIMIT);
    expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(401));
    expect(statuses.slice(LIMIT)).toEqual(Array(4 * LIMIT).fill(429));

    const refused = await get(generateApiKey(), '10.0.0.7');
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.json()).toEqual({
      type: 'https://docs.vulntriage.dev/errors/rate_limited',
      title: expect.any(String),
      status: 429,
      code: 'rate_limited',
      detail: 'Too many failed authentications from this address; retry later.',
      requestId: expect.any(String),
    });

    // The key this address already verified still works; another address is not affected.
    expect((await get(user.key, '10.0.0.7')).statusCode).toBe(200);
    expect((await get(generateApiKey(), '10.0.0.8')).statusCode).toBe(401);
  });

  it('answers a repeated unknown key from its negative cache, without another lookup', async () => {
    const forged = generateApiKey();
    expect((await get(forged, '10.0.0.9')).statusCode).toBe(401);
    const before = lookups;
    for (let i = 0; i < 5; i++) expect((await get(forged, '10.0.0.10')).statusCode).toBe(401);
    expect(lookups).toBe(before);
  });
});
