import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { HOUR } from '../../helpers/clock.js';

let t: TestApp;
const secrets: string[] = [];

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
  // The secret of a key never appears in any log line (docs/api.md#errors).
  const logged = t.logs.join('\n');
  for (const s of secrets) expect(logged).not.toContain(s);
});

const me = (key: string) =>
  t.app.inject({ method: 'GET', url: '/api/v1/keys/me', headers: { 'x-api-key': key } });

describe('key lifecycle through HTTP', () => {
  it('sign up → reveal once → use → rotate with grace → old key expires → revoke', async () => {
    const signup = await t.app.inject({
      method: 'POST',
      url: '/api/console/signup',
      payload: {
        email: 'owner@acme.example',
        password: 'correct horse battery staple',
        workspaceName: 'Acme',
        plan: 'trial',
      },
    });
    expect(signup.statusCode).toBe(201);
    const body = signup.json();
    expect(body).toEqual({
      workspace: { id: expect.any(String), name: 'Acme', plan: 'trial', trialEndsAt: expect.any(String) },
      revealUrl: expect.stringMatching(/^\/reveal\/[A-Za-z0-9_-]{43}$/),
      csrfToken: expect.any(String),
    });
    const setCookie = String(signup.headers['set-cookie']);
    expect(setCookie).toMatch(/svc_session=[^;]+; .*HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    const cookie = setCookie.split(';')[0]!;
    secrets.push(cookie.split('=')[1]!, body.revealUrl.split('/').pop());

    const reveal = await t.app.inject({
      method: 'GET',
      url: `/api/console${body.revealUrl}`,
      headers: { cookie },
    });
    expect(reveal.statusCode).toBe(200);
    expect(reveal.headers['cache-control']).toBe('no-store');
    const { key, keyId, masked } = reveal.json();
    secrets.push(key);
    expect(key).toMatch(/^svc_[0-9A-Za-z]{38}$/);
    expect(masked).toBe(`${key.slice(0, 8)}****************${key.slice(-4)}`);

    const again = await t.app.inject({
      method: 'GET',
      url: `/api/console${body.revealUrl}`,
      headers: { cookie },
    });
    expect(again.statusCode).toBe(410);
    expect(again.json()).toEqual({
      type: 'https://docs.vulntriage.dev/errors/reveal_expired',
      title: 'Reveal link expired',
      status: 410,
      code: 'reveal_expired',
      detail: 'This key was already revealed, or its reveal link is older than 15 minutes.',
      requestId: again.headers['x-request-id'],
    });
    expect(again.body).not.toContain(key);

    const first = await me(key);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({
      id: keyId,
      label: 'Default key',
      masked,
      scopes: ['triage:write', 'scans:write', 'scans:read', 'cases:write', 'usage:read'],
      status: 'active',
      rotationHealth: 'healthy',
      expiresAt: null,
      workspace: { id: body.workspace.id, name: 'Acme', plan: 'trial', trialDaysLeft: 14 },
    });
    expect(first.body).not.toContain(key);

    const rotate = await t.app.inject({
      method: 'POST',
      url: `/api/console/keys/${keyId}/rotate`,
      headers: { cookie, 'x-csrf-token': body.csrfToken },
      payload: { graceHours: 2 },
    });
    expect(rotate.statusCode).toBe(201);
    const rotated = rotate.json();
    expect(rotated.rotated).toMatchObject({
      id: keyId,
      status: 'rotating',
      successorId: rotated.successor.id,
    });
    const successorReveal = await t.app.inject({
      method: 'GET',
      url: `/api/console${rotated.successor.revealUrl}`,
      headers: { cookie },
    });
    const successor = successorReveal.json().key as string;
    secrets.push(successor);

    expect((await me(key)).json()).toMatchObject({ status: 'rotating' });
    expect((await me(successor)).statusCode).toBe(200);

    t.clock.advance(2 * HOUR + 1);
    const expired = await me(key);
    expect(expired.statusCode).toBe(401);
    expect(expired.json()).toMatchObject({ code: 'key_expired', status: 401 });
    expect((await me(successor)).statusCode).toBe(200);

    const revoke = await t.app.inject({
      method: 'POST',
      url: `/api/console/keys/${rotated.successor.id}/revoke`,
      headers: { cookie, 'x-csrf-token': body.csrfToken },
    });
    expect(revoke.statusCode).toBe(200);
    expect(revoke.json()).toMatchObject({ status: 'revoked', revokedAt: expect.any(String) });
    const revoked = await me(successor);
    expect(revoked.statusCode).toBe(401);
    expect(revoked.json()).toEqual({
      type: 'https://docs.vulntriage.dev/errors/key_revoked',
      title: 'API key revoked',
      status: 401,
      code: 'key_revoked',
      detail: 'The API key has been revoked.',
      requestId: revoked.headers['x-request-id'],
    });

    const audit = await t.infra.pool.query<{ action: string }>(
      `SELECT action FROM key_audit_events WHERE workspace_id = $1 ORDER BY id`,
      [body.workspace.id],
    );
    expect(audit.rows.map((r) => r.action).sort()).toEqual([
      'create',
      'create',
      'reveal',
      'reveal',
      'revoke',
      'rotate',
    ]);
  });

  it('a reveal link stops working after 15 minutes', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/console/signup',
      payload: {
        email: 'late@acme.example',
        password: 'correct horse battery staple',
        workspaceName: 'Late',
        plan: 'free',
      },
    });
    const cookie = String(res.headers['set-cookie']).split(';')[0]!;
    t.clock.advance(15 * 60_000 + 1);
    const reveal = await t.app.inject({
      method: 'GET',
      url: `/api/console${res.json().revealUrl}`,
      headers: { cookie },
    });
    expect(reveal.statusCode).toBe(410);
    const stored = await t.infra.pool.query(
      `SELECT count(*)::int AS n FROM key_reveals WHERE sealed_secret IS NOT NULL AND workspace_id = $1`,
      [res.json().workspace.id],
    );
    expect(stored.rows[0].n).toBe(0);
  });

  it('programmatic keys: a keys:write key creates, lists, rotates and revokes', async () => {
    const owner = await signUp(t.app);
    secrets.push(owner.key);
    const admin = await t.app.inject({
      method: 'POST',
      url: '/api/console/keys',
      headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf },
      payload: { label: 'automation', scopes: ['keys:write'], expiresIn: 90 },
    });
    const adminReveal = await t.app.inject({
      method: 'GET',
      url: `/api/console${admin.json().revealUrl}`,
      headers: { cookie: owner.cookie },
    });
    const adminKey = adminReveal.json().key as string;
    secrets.push(adminKey);
    const h = { 'x-api-key': adminKey };

    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: h,
      payload: { label: 'ci', scopes: ['scans:write'] },
    });
    expect(created.statusCode).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const ci = created.json();
    secrets.push(ci.key);
    expect(ci).toMatchObject({
      label: 'ci',
      scopes: ['scans:write'],
      status: 'active',
      key: expect.stringMatching(/^svc_/),
    });

    const list = await t.app.inject({ method: 'GET', url: '/api/v1/keys', headers: h });
    expect(list.statusCode).toBe(200);
    expect(
      list
        .json()
        .data.map((k: { label: string }) => k.label)
        .sort(),
    ).toEqual(['Default key', 'automation', 'ci']);
    expect(list.body).not.toContain(ci.key);

    const rot = await t.app.inject({
      method: 'POST',
      url: `/api/v1/keys/${ci.id}/rotate`,
      headers: h,
      payload: { graceHours: 0 },
    });
    expect(rot.statusCode).toBe(201);
    secrets.push(rot.json().successor.key);
    expect(rot.json().rotated.status).toBe('expired');
    expect((await me(ci.key)).json().code).toBe('key_expired');

    const rev = await t.app.inject({
      method: 'POST',
      url: `/api/v1/keys/${rot.json().successor.id}/revoke`,
      headers: h,
    });
    expect(rev.json().status).toBe('revoked');

    const twice = await t.app.inject({
      method: 'POST',
      url: `/api/v1/keys/${ci.id}/rotate`,
      headers: h,
      payload: {},
    });
    expect(twice.statusCode).toBe(409);
    expect(twice.json()).toMatchObject({
      code: 'conflict',
      detail: 'Only an active key can be rotated; this key is expired.',
    });
  });
});
