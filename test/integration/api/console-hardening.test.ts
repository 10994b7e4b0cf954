import { randomBytes, scryptSync } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { problemDocument } from '../../helpers/problem.js';

/**
 * docs/console.md#sessions-and-security and docs/api.md#errors: small hardening of the key and console routes and the
 * messages a caller reads — nosniff, no-store on /keys/me, Origin checks on console state
 * changes, no bidi controls in key labels, one message for a bad expiry, stronger scrypt with
 * rehash at login.
 */
let t: TestApp;
let owner: Awaited<ReturnType<typeof signUp>>;
let db: pg.Client;

beforeAll(async () => {
  t = await startTestApp();
  owner = await signUp(t.app, { plan: 'free' });
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

const createKey = (payload: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: '/api/console/keys',
    headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf, ...headers },
    payload: payload as Record<string, unknown>,
  });

const invalid = (errors: { path: string; message: string }[]) => ({
  ...problemDocument(
    400,
    'invalid_request',
    'Invalid request',
    'The request has invalid fields; see errors.',
  ),
  errors,
});

describe('response headers', () => {
  it('JSON answers carry X-Content-Type-Options: nosniff; /keys/me is Cache-Control: no-store', async () => {
    const me = await t.app.inject({
      method: 'GET',
      url: '/api/v1/keys/me',
      headers: { 'x-api-key': owner.key },
    });
    expect(me.statusCode).toBe(200);
    expect(me.headers['x-content-type-options']).toBe('nosniff');
    expect(me.headers['cache-control']).toBe('no-store');
    const problem = await t.app.inject({ method: 'GET', url: '/api/v1/keys/me' });
    expect(problem.headers['x-content-type-options']).toBe('nosniff');
    const ws = await t.app.inject({
      method: 'GET',
      url: '/api/console/workspace',
      headers: { cookie: owner.cookie },
    });
    expect(ws.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('console state changes check Origin', () => {
  const crossSite = problemDocument(
    403,
    'csrf_failed',
    'CSRF check failed',
    'The request came from another site (its Origin is not this console).',
  );

  it.each(['https://evil.example', 'null', 'http://localhost:8080', 'file://localhost'])(
    'refuses Origin %s with 403 even with the right CSRF token',
    async (origin) => {
      const res = await createKey({ label: 'x', scopes: ['scans:read'] }, { origin });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual(crossSite);
    },
  );

  it('refuses a cross-origin sign-up and login too', async () => {
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/console/login',
      headers: { origin: 'https://evil.example' },
      payload: { email: owner.email, password: owner.password },
    });
    expect(login.statusCode).toBe(403);
    expect(login.json()).toEqual(crossSite);
  });

  it('accepts its own origin (default port written or not) and callers that send none', async () => {
    for (const origin of ['http://localhost', 'http://localhost:80']) {
      expect((await createKey({ label: 'same', scopes: ['scans:read'] }, { origin })).statusCode).toBe(201);
    }
    expect((await createKey({ label: 'no origin', scopes: ['scans:read'] })).statusCode).toBe(201);
  });
});

describe('key labels and expiry', () => {
  it.each(['\u202Eevil', 'ci\u2066x\u2069', 'a\u200Fb', 'a\u200Eb', '\u202Ax'])(
    'refuses a label with a bidi control (%j) with one clear 400',
    async (label) => {
      const res = await createKey({ label, scopes: ['scans:read'] });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(
        invalid([
          {
            path: '/label',
            message:
              'must not contain bidirectional control characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F)',
          },
        ]),
      );
    },
  );

  it.each([45, 'soon', true, 30.5, '2020-01-01'])(
    'expiresIn %j: one message saying what is allowed',
    async (expiresIn) => {
      const res = await createKey({ label: 'x', scopes: ['scans:read'], expiresIn });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(
        invalid([
          {
            path: '/expiresIn',
            message: 'must be "never", one of 30, 60, 90, 180, 365 days, or a future ISO 8601 date',
          },
        ]),
      );
    },
  );
});

describe('every bad field listed once', () => {
  it('a bidi label, an unknown scope and expiresIn 45 are answered together', async () => {
    const res = await createKey({ label: '\u202Ex', scopes: ['root'], expiresIn: 45 });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(
      invalid([
        {
          path: '/label',
          message:
            'must not contain bidirectional control characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F)',
        },
        { path: '/scopes/0', message: expect.stringMatching(/^must be one of triage:write, /) },
        {
          path: '/expiresIn',
          message: 'must be "never", one of 30, 60, 90, 180, 365 days, or a future ISO 8601 date',
        },
      ]),
    );
  });
});

describe('console passwords', () => {
  const hashOf = async (email: string) =>
    (await db.query<{ h: string }>('SELECT password_hash AS h FROM console_users WHERE email = $1', [email]))
      .rows[0]!.h;

  it('new passwords are hashed with scrypt N=2^17', async () => {
    expect(await hashOf(owner.email)).toMatch(/^scrypt\$131072\$8\$1\$/);
  });

  it('an N=2^15 hash still verifies, and is replaced by an N=2^17 one at login', async () => {
    const salt = randomBytes(16);
    const old = scryptSync(owner.password.normalize('NFKC'), salt, 64, {
      N: 32768,
      r: 8,
      p: 1,
      maxmem: 64 << 20,
    });
    const legacy = ['scrypt', 32768, 8, 1, salt.toString('base64url'), old.toString('base64url')].join('$');
    await db.query('UPDATE console_users SET password_hash = $1 WHERE email = $2', [legacy, owner.email]);

    const wrong = await t.app.inject({
      method: 'POST',
      url: '/api/console/login',
      payload: { email: owner.email, password: 'not the password' },
    });
    expect(wrong.statusCode).toBe(401);
    expect(await hashOf(owner.email)).toBe(legacy);

    const login = await t.app.inject({
      method: 'POST',
      url: '/api/console/login',
      payload: { email: owner.email, password: owner.password },
    });
    expect(login.statusCode).toBe(200);
    const rehashed = await hashOf(owner.email);
    expect(rehashed).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(rehashed).not.toBe(legacy);

    const again = await t.app.inject({
      method: 'POST',
      url: '/api/console/login',
      payload: { email: owner.email, password: owner.password },
    });
    expect(again.statusCode).toBe(200);
    expect(await hashOf(owner.email)).toBe(rehashed);
  });
});
