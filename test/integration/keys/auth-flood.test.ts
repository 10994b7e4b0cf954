import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../../src/domain/keys/key-format.js';
import { createKey, signUp, startTestApp, type TestApp } from '../../helpers/test-app.js';

/**
 * Keys that pass the checksum but match no row each cost a database lookup. A flood of them
 * from one address must cost no more than a flood of malformed keys: a bounded number of
 * lookups, then paced lookups (LIMIT / 6 a second, so 1 here with its burst) and 429
 * `rate_limited` with Retry-After past the pace, while another address and a key already
 * verified from the flooding one still work, a valid key from the same address (NAT) is
 * accepted once the pace has room, and revoked keys are no guesses. The app's clock stands
 * still unless a test moves it, so the pace is exact.
 */
const LIMIT = 10;
const PACED_BURST = 1; // floor(max(1, LIMIT / 6))

describe('a flood of forged keys', () => {
  let t: TestApp;
  let lookups = 0;

  beforeAll(async () => {
    t = await startTestApp({ env: { AUTH_FAILURES_PER_MINUTE: String(LIMIT) } });
    const query = t.infra.pool.query.bind(t.infra.pool) as (...args: unknown[]) => Promise<unknown>;
    (t.infra.pool as unknown as { query: typeof query }).query = (...args: unknown[]) => {
      // The lookup of a key by its hash, as a string or as the query object `sql` builds.
      const text =
        typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string } | null)?.text ?? '');
      if (/WHERE k\.key_hash = \$1/.test(text)) lookups++;
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
    expect(lookups).toBe(LIMIT + PACED_BURST);
    expect(statuses.slice(0, LIMIT + PACED_BURST)).toEqual(Array(LIMIT + PACED_BURST).fill(401));
    expect(statuses.slice(LIMIT + PACED_BURST)).toEqual(Array(4 * LIMIT - PACED_BURST).fill(429));

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

  it('accepts a valid key nobody verified yet from a flooding address (NAT), and still paces the guesses', async () => {
    const owner = await signUp(t.app);
    const fresh = await createKey(t.app, owner, ['usage:read'], 'behind the same NAT');
    for (let i = 0; i < 3 * LIMIT; i++) await get(generateApiKey(), '10.0.1.1');
    expect((await get(generateApiKey(), '10.0.1.1')).statusCode).toBe(429);

    t.clock.advance(1_000); // the pace has room for one lookup again
    const valid = await get(fresh.key, '10.0.1.1');
    expect(valid.statusCode).toBe(200);
    expect(valid.json().id).toBe(fresh.id);

    // Guessing stays slowed: one lookup a second, the rest refused without one.
    t.clock.advance(1_000);
    lookups = 0;
    const statuses: number[] = [];
    for (let i = 0; i < 2 * LIMIT; i++) statuses.push((await get(generateApiKey(), '10.0.1.1')).statusCode);
    expect(lookups).toBe(1);
    expect(statuses).toEqual([401, ...Array(2 * LIMIT - 1).fill(429)]);
  });

  it('does not count a revoked key of a workspace as a guess', async () => {
    const owner = await signUp(t.app);
    const old = await createKey(t.app, owner, ['usage:read'], 'revoked');
    const revoked = await t.app.inject({
      method: 'POST',
      url: `/api/console/keys/${old.id}/revoke`,
      headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf },
    });
    expect(revoked.statusCode).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 3 * LIMIT; i++) statuses.push((await get(old.key, '10.0.2.1')).statusCode);
    expect(statuses).toEqual(Array(3 * LIMIT).fill(401));
    expect((await get(old.key, '10.0.2.1')).json().code).toBe('key_revoked');
    // No failures counted: an unknown key from that address is still looked up (401, not 429).
    expect((await get(generateApiKey(), '10.0.2.1')).statusCode).toBe(401);
  });

  it('answers a repeated unknown key from its negative cache, without another lookup', async () => {
    const forged = generateApiKey();
    expect((await get(forged, '10.0.0.9')).statusCode).toBe(401);
    const before = lookups;
    for (let i = 0; i < 5; i++) expect((await get(forged, '10.0.0.10')).statusCode).toBe(401);
    expect(lookups).toBe(before);
  });
});
