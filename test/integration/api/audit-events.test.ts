import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUp, startTestApp, type TestApp } from '../../helpers/test-app.js';

/**
 * `GET /api/v1/audit-events`, happy paths (docs/api.md#audit-log): every key action and plan change
 * a workspace made, newest first, with actor, address and user agent; filters and keyset paging.
 */
let t: TestApp;
let owner: Awaited<ReturnType<typeof signUp>>;
let admin: { id: string; key: string };
let ci: { id: string; key: string };
let successorId = '';

const list = (query = '') =>
  t.app.inject({ method: 'GET', url: `/api/v1/audit-events${query}`, headers: { 'x-api-key': admin.key } });

beforeAll(async () => {
  t = await startTestApp();
  owner = await signUp(t.app, { plan: 'trial' });
  admin = await createKey(t.app, owner, ['keys:write'], 'audit admin');
  ci = await createKey(t.app, owner, ['scans:write'], 'ci');
  const rotated = await t.app.inject({
    method: 'POST',
    url: `/api/v1/keys/${ci.id}/rotate`,
    headers: { 'x-api-key': admin.key, 'user-agent': 'audit-test/1.0' },
    payload: { graceHours: 2 },
  });
  expect(rotated.statusCode).toBe(201);
  successorId = rotated.json().successor.id;
  const plan = (p: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/console/plan',
      headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf, 'user-agent': 'console-browser' },
      payload: { plan: p },
    });
  expect((await plan('service')).statusCode).toBe(200);
  expect((await plan('free')).statusCode).toBe(200);
});
afterAll(async () => {
  await t?.close();
});

describe('GET /api/v1/audit-events', () => {
  it('lists every event of the workspace newest first, plan changes included', async () => {
    const res = await list();
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const body = res.json();
    expect(body.object).toBe('list');
    expect(body.nextCursor).toBeNull();
    const actions = body.data.map((e: { action: string; keyId: string | null }) => [e.action, e.keyId]);
    expect(actions).toEqual([
      ['plan_change', null],
      ['plan_change', null],
      ['rotate', ci.id],
      ['reveal', successorId],
      ['create', successorId],
      ['reveal', ci.id],
      ['create', ci.id],
      ['reveal', admin.id],
      ['create', admin.id],
      ['reveal', owner.keyId],
      ['create', owner.keyId],
    ]);
    const ids = body.data.map((e: { id: string }) => BigInt(e.id));
    expect([...ids].sort((a, b) => (a > b ? -1 : 1))).toEqual(ids);
  });

  it('records who rotated a key, from where, with which user agent, and the successor', async () => {
    const body = (await list(`?action=rotate`)).json();
    expect(body.data).toEqual([
      {
        object: 'audit_event',
        id: expect.stringMatching(/^\d+$/),
        at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        action: 'rotate',
        actor: `key:${admin.id}`,
        ip: '127.0.0.1',
        userAgent: 'audit-test/1.0',
        keyId: ci.id,
        details: { successorId, graceHours: 2 },
      },
    ]);
  });

  it('records an upgrade and a downgrade (the trial ends) with the console user as actor', async () => {
    const body = (await list(`?action=plan_change`)).json();
    expect(body.data.map((e: Record<string, unknown>) => [e.actor, e.userAgent, e.details])).toEqual([
      [
        `user:${(await session()).userId}`,
        'console-browser',
        { from: 'service', to: 'free', reason: 'downgrade' },
      ],
      [
        `user:${(await session()).userId}`,
        'console-browser',
        { from: 'trial', to: 'service', reason: 'upgrade' },
      ],
    ]);
    const ws = await t.app.inject({
      method: 'GET',
      url: '/api/console/workspace',
      headers: { cookie: owner.cookie },
    });
    expect(ws.json()).toMatchObject({ plan: 'free', trialDaysLeft: null });
  });

  it('filters by key and by action together', async () => {
    const body = (await list(`?key=${ci.id}&action=create`)).json();
    expect(body.data.map((e: { action: string; keyId: string }) => [e.action, e.keyId])).toEqual([
      ['create', ci.id],
    ]);
  });

  it('filters by time: a range that ends before the events matches none, today matches all', async () => {
    const today = new Date().toISOString().slice(0, 10);
    expect((await list(`?from=2020-01-01&to=2020-12-31`)).json().data).toEqual([]);
    expect((await list(`?from=${today}&to=${today}`)).json().data).toHaveLength(11);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await list(`?from=${encodeURIComponent(future)}`)).json().data).toEqual([]);
  });

  it('pages with limit and nextCursor without skipping or repeating an event', async () => {
    const all = (await list()).json().data.map((e: { id: string }) => e.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(`?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.data.length).toBeLessThanOrEqual(4);
      seen.push(...body.data.map((e: { id: string }) => e.id));
      cursor = body.nextCursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(all);
  });
});

describe('expiry by rotation', () => {
  it('audits the expiry of a key rotated with no grace, which the sweeper never sees', async () => {
    const other = await signUp(t.app, { plan: 'trial' });
    const keysAdmin = await createKey(t.app, other, ['keys:write'], 'admin');
    const old = await createKey(t.app, other, ['scans:write'], 'ci');
    const rotated = await t.app.inject({
      method: 'POST',
      url: `/api/v1/keys/${old.id}/rotate`,
      headers: { 'x-api-key': keysAdmin.key, 'user-agent': 'rotate-now/1.0' },
      payload: { graceHours: 0 },
    });
    expect(rotated.statusCode).toBe(201);
    const successor = rotated.json().successor.id;
    const state = await t.app.inject({
      method: 'GET',
      url: '/api/v1/keys',
      headers: { 'x-api-key': keysAdmin.key },
    });
    expect(state.json().data.find((k: { id: string }) => k.id === old.id).status).toBe('expired');

    const events = await t.app.inject({
      method: 'GET',
      url: `/api/v1/audit-events?key=${old.id}`,
      headers: { 'x-api-key': keysAdmin.key },
    });
    const data = events.json().data as Array<Record<string, unknown>>;
    expect(data.map((e) => e.action)).toEqual(['expire', 'rotate', 'reveal', 'create']);
    expect(data.slice(0, 2).map((e) => [e.action, e.actor, e.userAgent, e.details])).toEqual([
      ['expire', `key:${keysAdmin.id}`, 'rotate-now/1.0', { reason: 'rotation', successorId: successor }],
      ['rotate', `key:${keysAdmin.id}`, 'rotate-now/1.0', { successorId: successor, graceHours: 0 }],
    ]);
  });
});

async function session(): Promise<{ userId: string }> {
  const res = await t.app.inject({
    method: 'GET',
    url: '/api/console/session',
    headers: { cookie: owner.cookie },
  });
  return res.json();
}
