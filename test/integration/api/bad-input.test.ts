import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, createKey, type TestApp } from '../../helpers/test-app.js';

let t: TestApp;
let owner: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;
let keysAdminA: { id: string; key: string };

beforeAll(async () => {
  t = await startTestApp();
  owner = await signUp(t.app, { workspaceName: 'Workspace A' });
  other = await signUp(t.app, { workspaceName: 'Workspace B' });
  keysAdminA = await createKey(t.app, owner, ['keys:write'], 'admin A');
});
afterAll(async () => {
  await t.close();
  const logged = t.logs.join('\n');
  for (const s of [owner.key, other.key, keysAdminA.key, owner.password]) expect(logged).not.toContain(s);
});

/** Whole problem document of docs/api.md#errors, with the request id of the response. */
function problem(
  res: { headers: Record<string, unknown>; json(): unknown },
  code: string,
  status: number,
  title: string,
  detail: string,
  errors?: unknown,
) {
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(res.json()).toEqual({
    type: `https://docs.vulntriage.dev/errors/${code}`,
    title,
    status,
    code,
    detail,
    requestId: res.headers['x-request-id'],
    ...(errors ? { errors } : {}),
  });
}

describe('authentication errors', () => {
  it('a missing header is missing_api_key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/keys/me' });
    expect(res.statusCode).toBe(401);
    problem(
      res,
      'missing_api_key',
      401,
      'Missing API key',
      'This route needs an API key in the X-API-Key header.',
    );
  });

  it('a key in the wrong header is missing_api_key, saying where it belongs', async () => {
    for (const headers of [{ authorization: `Bearer ${owner.key}` }, { 'x-api-token': owner.key }]) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/keys/me', headers });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('missing_api_key');
      expect(res.body).not.toContain(owner.key);
    }
    const inUrl = await t.app.inject({ method: 'GET', url: `/api/v1/keys/me?api_key=${owner.key}` });
    problem(
      inUrl,
      'missing_api_key',
      401,
      'Missing API key',
      'Send the API key in the X-API-Key header, not in Authorization or the URL.',
    );
  });

  it('a malformed or unknown key is invalid_api_key', async () => {
    const lastChanged = `${owner.key.slice(0, -1)}${owner.key.endsWith('x') ? 'y' : 'x'}`;
    for (const key of ['nope', lastChanged, 'svc_' + 'A'.repeat(38)]) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/models', headers: { 'x-api-key': key } });
      expect(res.statusCode).toBe(401);
      problem(res, 'invalid_api_key', 401, 'Invalid API key', 'The API key is not valid.');
    }
  });
});

describe('scopes', () => {
  it('a key without usage:read gets 403 insufficient_scope on /api/v1/usage and /api/v1/keys/me', async () => {
    const scanner = await createKey(t.app, owner, ['scans:write']);
    for (const url of ['/api/v1/usage', '/api/v1/keys/me']) {
      const res = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': scanner.key } });
      expect(res.statusCode).toBe(403);
      problem(
        res,
        'insufficient_scope',
        403,
        'Insufficient scope',
        'This route needs a key with the usage:read scope.',
      );
    }
    // Any valid key may read the catalog.
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/v1/models', headers: { 'x-api-key': scanner.key } }))
        .statusCode,
    ).toBe(200);
  });

  it('key management needs keys:write; the first key does not have it', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/keys',
      headers: { 'x-api-key': owner.key },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toBe('This route needs a key with the keys:write scope.');
  });
});

describe('validation', () => {
  const post = (payload: string | object, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { 'x-api-key': keysAdminA.key, 'content-type': 'application/json', ...headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });

  it('malformed JSON is invalid_request', async () => {
    const res = await post('{"label": "x",');
    expect(res.statusCode).toBe(400);
    problem(res, 'invalid_request', 400, 'Invalid request', 'The body is not valid JSON.');
  });

  it('lists every bad field: unknown fields, wrong types, bad enums, missing fields', async () => {
    const res = await post({ labl: 'typo', scopes: ['scans:write', 'root'], expiresIn: true });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.code).toBe('invalid_request');
    const paths = body.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['/labl', '/label', '/scopes/1', '/expiresIn']));
    expect(body.errors).toContainEqual({ path: '/labl', message: 'is not an allowed field' });
    expect(body.errors).toContainEqual({ path: '/label', message: 'is required' });
  });

  it('does not coerce types', async () => {
    const res = await post({ label: 12, scopes: 'scans:write' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual(
      expect.arrayContaining([
        { path: '/label', message: 'must be string' },
        { path: '/scopes', message: 'must be array' },
      ]),
    );
  });

  it('rejects a past or odd expiry with the field named', async () => {
    const res = await post({ label: 'x', scopes: ['scans:read'], expiresIn: '2001-01-01' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([
      {
        path: '/expiresIn',
        message: 'must be "never", one of 30, 60, 90, 180, 365 days, or a future ISO 8601 date',
      },
    ]);
  });

  it('an oversized body is payload_too_large', async () => {
    const res = await post({ label: 'x'.repeat(100_000), scopes: ['scans:read'] });
    expect(res.statusCode).toBe(413);
    problem(
      res,
      'payload_too_large',
      413,
      'Payload too large',
      'The request body is larger than this route accepts.',
    );
  });

  it('a body that is not JSON is unsupported_media_type', async () => {
    const res = await post('label=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.statusCode).toBe(415);
    problem(
      res,
      'unsupported_media_type',
      415,
      'Unsupported media type',
      'Send this route a body of Content-Type application/json.',
    );
  });

  it('hostile strings are stored and echoed as data, never interpreted', async () => {
    const label = `'; DROP TABLE api_keys; -- <script>alert(1)</script> \u0000`.replace('\u0000', '');
    const res = await post({ label, scopes: ['scans:read'] });
    expect(res.statusCode).toBe(201);
    expect(res.json().label).toBe(label);
    const count = await t.infra.pool.query('SELECT count(*)::int AS n FROM api_keys');
    expect(count.rows[0].n).toBeGreaterThan(0);
  });

  it('an unknown route is a problem document too', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/nothing-here',
      headers: { 'x-api-key': owner.key },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('not_found');
  });

  it('signup lists every missing field', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/console/signup', payload: {} });
    expect(res.statusCode).toBe(400);
    expect(
      res
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['/email', '/password', '/plan', '/workspaceName']);
  });
});

describe('isolation between workspaces', () => {
  it('a key of workspace A gets 404 for every id of workspace B on every route that takes an id', async () => {
    const bKey = await createKey(t.app, other, ['usage:read'], 'B key');
    const ids = [other.keyId, bKey.id];
    for (const id of ids) {
      for (const action of ['rotate', 'revoke']) {
        const api = await t.app.inject({
          method: 'POST',
          url: `/api/v1/keys/${id}/${action}`,
          headers: { 'x-api-key': keysAdminA.key },
          payload: {},
        });
        expect(api.statusCode).toBe(404);
        problem(api, 'not_found', 404, 'Not found', 'No such key.');
        const consoleRes = await t.app.inject({
          method: 'POST',
          url: `/api/console/keys/${id}/${action}`,
          headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf },
          payload: {},
        });
        expect(consoleRes.statusCode).toBe(404);
      }
    }
    // Unknown and malformed ids look exactly the same.
    for (const id of ['00000000-0000-0000-0000-000000000000', 'not-a-uuid', "1' OR '1'='1"]) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v1/keys/${encodeURIComponent(id)}/revoke`,
        headers: { 'x-api-key': keysAdminA.key },
      });
      expect(res.statusCode).toBe(404);
    }
    // B's keys still work: nothing happened to them.
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/v1/keys/me', headers: { 'x-api-key': bKey.key } }))
        .statusCode,
    ).toBe(200);
    // A's key list never shows B's keys.
    const list = await t.app.inject({
      method: 'GET',
      url: '/api/v1/keys',
      headers: { 'x-api-key': keysAdminA.key },
    });
    expect(list.json().data.map((k: { id: string }) => k.id)).not.toContain(bKey.id);
  });

  it("another workspace's reveal link is not found", async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/console/keys',
      headers: { cookie: other.cookie, 'x-csrf-token': other.csrf },
      payload: { label: 'b', scopes: ['scans:read'] },
    });
    const url = `/api/console${created.json().revealUrl}`;
    const res = await t.app.inject({ method: 'GET', url, headers: { cookie: owner.cookie } });
    expect(res.statusCode).toBe(404);
    // ...and B can still reveal it.
    expect((await t.app.inject({ method: 'GET', url, headers: { cookie: other.cookie } })).statusCode).toBe(
      200,
    );
  });
});

describe('console sessions', () => {
  it('refuses a state-changing call without the CSRF token', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/console/keys',
      headers: { cookie: owner.cookie },
      payload: { label: 'x', scopes: ['scans:read'] },
    });
    expect(res.statusCode).toBe(403);
    problem(
      res,
      'csrf_failed',
      403,
      'CSRF check failed',
      'The X-CSRF-Token header is missing or does not match this session.',
    );
  });

  it('needs a session', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/console/workspace' });
    problem(res, 'unauthenticated', 401, 'Not signed in', 'Sign in to the console first.');
  });

  it('logs in, rate-limits wrong passwords, and logs out', async () => {
    const ok = await t.app.inject({
      method: 'POST',
      url: '/api/console/login',
      payload: { email: owner.email, password: owner.password },
    });
    expect(ok.statusCode).toBe(200);
    const cookie = String(ok.headers['set-cookie']).split(';')[0]!;
    const csrf = ok.json().csrfToken;
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/console/workspace', headers: { cookie } })).json().name,
    ).toBe('Workspace A');

    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const bad = await t.app.inject({
        method: 'POST',
        url: '/api/console/login',
        payload: { email: other.email, password: 'wrong password!' },
      });
      statuses.push(bad.statusCode);
    }
    expect(statuses.slice(0, 9).every((s) => s === 401)).toBe(true);
    expect(statuses.at(-1)).toBe(429);

    const out = await t.app.inject({
      method: 'POST',
      url: '/api/console/logout',
      headers: { cookie, 'x-csrf-token': csrf },
    });
    expect(out.statusCode).toBe(204);
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/console/workspace', headers: { cookie } })).statusCode,
    ).toBe(401);
  }, 120_000); // a dozen scrypt N=2^17 logins: seconds each on a loaded CI machine
});
