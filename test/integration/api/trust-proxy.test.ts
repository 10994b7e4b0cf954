import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/lib/config.js';
import { createKey, signUp, startTestApp, TEST_PEPPER, type TestApp } from '../../helpers/test-app.js';

/*
 * TRUST_PROXY (docs/deploy.md#behind-a-load-balancer): off by default, so a forged
 * X-Forwarded-For changes nothing; with a hop count or the proxies' addresses, per-address limits
 * and audit events see the client's address instead of the balancer's.
 */

const apps: TestApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.close();
});

/** Creates a key from `remoteAddress` with `forwardedFor`, and returns the address its audit event records. */
async function auditedAddress(trustProxy: string | null, remoteAddress: string, forwardedFor: string) {
  const t = await startTestApp({ env: trustProxy === null ? {} : { TRUST_PROXY: trustProxy } });
  apps.push(t);
  const owner = await signUp(t.app);
  const admin = await createKey(t.app, owner, ['keys:write']);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/keys',
    remoteAddress,
    headers: { 'x-api-key': admin.key, 'x-forwarded-for': forwardedFor },
    payload: { label: 'from behind a proxy', scopes: ['scans:read'] },
  });
  expect(res.statusCode, res.body).toBe(201);
  const created = (res.json() as { id: string }).id;
  const events = (
    await t.app.inject({
      method: 'GET',
      url: '/api/v1/audit-events?action=create',
      headers: { 'x-api-key': admin.key },
    })
  ).json() as { data: { keyId: string; ip: string }[] };
  return events.data.find((e) => e.keyId === created)?.ip;
}

describe('TRUST_PROXY', () => {
  it('is off by default: a forged X-Forwarded-For is ignored', async () => {
    expect(await auditedAddress(null, '198.51.100.7', '203.0.113.9')).toBe('198.51.100.7');
  });

  it('with a proxy range, believes X-Forwarded-For from that range only', async () => {
    expect(await auditedAddress('10.0.0.0/8', '10.1.2.3', '203.0.113.9')).toBe('203.0.113.9');
    expect(await auditedAddress('10.0.0.0/8', '198.51.100.7', '203.0.113.9')).toBe('198.51.100.7');
  });

  it('with a hop count, takes the address that many proxies in', async () => {
    // The client forged the first entry; the one balancer appended the real address.
    expect(await auditedAddress('1', '10.1.2.3', '192.0.2.66, 203.0.113.9')).toBe('203.0.113.9');
  });

  it('refuses a value that is neither a hop count nor addresses, naming the variable', () => {
    for (const bad of ['yes-please', '10.0.0.0/33', '300.1.1.1', '1.2.3.4/8/9'])
      expect(() => loadConfig({ KEY_PEPPER: TEST_PEPPER, TRUST_PROXY: bad })).toThrow(ConfigError);
    expect(() => loadConfig({ KEY_PEPPER: TEST_PEPPER, TRUST_PROXY: 'x' })).toThrow(/TRUST_PROXY/);
    expect(loadConfig({ KEY_PEPPER: TEST_PEPPER, TRUST_PROXY: '10.0.0.1, fd00::/8' }).trustProxy).toEqual([
      '10.0.0.1',
      'fd00::/8',
    ]);
    expect(loadConfig({ KEY_PEPPER: TEST_PEPPER, TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ KEY_PEPPER: TEST_PEPPER, TRUST_PROXY: '2' }).trustProxy).toBe(2);
  });
});
