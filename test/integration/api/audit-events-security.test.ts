import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUp, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { problemDocument } from '../../helpers/problem.js';

/**
 * `GET /api/v1/audit-events`, security: a `keys:write` key only, and a workspace never sees
 * another workspace's events, whatever key id or cursor it passes.
 */
let t: TestApp;
let a: Awaited<ReturnType<typeof signUp>>;
let b: Awaited<ReturnType<typeof signUp>>;
let adminA: { id: string; key: string };
let adminB: { id: string; key: string };

beforeAll(async () => {
  t = await startTestApp();
  a = await signUp(t.app, { plan: 'trial', workspaceName: 'A' });
  b = await signUp(t.app, { plan: 'free', workspaceName: 'B' });
  adminA = await createKey(t.app, a, ['keys:write'], 'admin A');
  adminB = await createKey(t.app, b, ['keys:write'], 'admin B');
  for (let i = 0; i < 3; i += 1) await createKey(t.app, a, ['scans:read'], `a-${i}`);
});
afterAll(async () => {
  await t?.close();
});

const list = (key: string | null, query = '') =>
  t.app.inject({
    method: 'GET',
    url: `/api/v1/audit-events${query}`,
    headers: key === null ? {} : { 'x-api-key': key },
  });

describe('GET /api/v1/audit-events security', () => {
  it('without a key: 401 missing_api_key', async () => {
    const res = await list(null);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(
      problemDocument(
        401,
        'missing_api_key',
        'Missing API key',
        'This route needs an API key in the X-API-Key header.',
      ),
    );
  });

  it('with a key that lacks keys:write (the first key has every other scope): 403 insufficient_scope', async () => {
    const res = await list(a.key);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(
      problemDocument(
        403,
        'insufficient_scope',
        'Insufficient scope',
        'This route needs a key with the keys:write scope.',
      ),
    );
  });

  it("never shows another workspace's events: not in the list, not by key id, not through its cursor", async () => {
    const ownB = (await list(adminB.key)).json().data as { keyId: string }[];
    expect(new Set(ownB.map((e) => e.keyId))).toEqual(new Set([b.keyId, adminB.id]));

    const byKey = await list(adminB.key, `?key=${adminA.id}`);
    expect(byKey.statusCode).toBe(200);
    expect(byKey.json()).toEqual({ object: 'list', data: [], nextCursor: null });

    const pageA = (await list(adminA.key, '?limit=2')).json();
    expect(pageA.nextCursor).toEqual(expect.any(String));
    const throughCursor = (await list(adminB.key, `?cursor=${pageA.nextCursor}`)).json().data as {
      keyId: string;
    }[];
    for (const e of throughCursor) expect([b.keyId, adminB.id]).toContain(e.keyId);
    const aKeys = new Set(
      ((await list(adminA.key, '?limit=200')).json().data as { keyId: string }[]).map((e) => e.keyId),
    );
    for (const e of ownB) expect(aKeys.has(e.keyId)).toBe(false);
  });

  it('the answer is JSON the browser must not sniff, and is not kept by caches', async () => {
    const res = await list(adminA.key);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-store');
  });
});
