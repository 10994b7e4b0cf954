import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { problemDocument } from '../../helpers/problem.js';
import { startOidcProvider, type TestOidcProvider } from '../../helpers/oidc-provider.js';
import { SSO_ENV, SSO_REDIRECT_URI, startSso } from '../../helpers/sso-flow.js';

/**
 * Settings > Single sign-on as JSON (docs/console.md#single-sign-on): saved and read back without
 * the client secret (sealed at rest, never logged), each change audited; hostile input refused
 * with problem documents; one workspace cannot see, take or start another's.
 */
let t: TestApp;
let idp: TestOidcProvider;
let owner: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;
let db: pg.Client;

const valid = () => ({
  slug: 'globex',
  issuer: idp.issuer,
  clientId: idp.clientId,
  clientSecret: idp.clientSecret,
  enabled: true,
  ssoRequired: false,
  emailDomains: ['globex.test'],
  autoJoin: false,
  defaultRole: 'viewer',
  groupsClaim: 'groups',
  groupRoles: { admins: 'admin' },
});

const put = (payload: unknown, who = owner, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'PUT',
    url: '/api/console/sso',
    headers: { cookie: who.cookie, 'x-csrf-token': who.csrf, ...headers },
    payload: payload as Record<string, unknown>,
  });
const get = (who = owner) =>
  t.app.inject({ method: 'GET', url: '/api/console/sso', headers: { cookie: who.cookie } });

const invalid = (errors: { path: string; message: string }[]) => ({
  ...problemDocument(
    400,
    'invalid_request',
    'Invalid request',
    'The request has invalid fields; see errors.',
  ),
  errors,
});

beforeAll(async () => {
  t = await startTestApp({ env: SSO_ENV });
  idp = await startOidcProvider({ redirectUri: SSO_REDIRECT_URI });
  owner = await signUp(t.app, { plan: 'free' });
  other = await signUp(t.app, { plan: 'free' });
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await idp?.close();
  await t?.close();
});

describe('settings', () => {
  it('starts unconfigured and names the redirect URI to register', async () => {
    const res = await get();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      object: 'sso_settings',
      configured: false,
      redirectUri: SSO_REDIRECT_URI,
      clientSecretSet: false,
      enabled: false,
    });
  });

  it('saves, returns only clientSecretSet, seals the secret at rest and never logs it', async () => {
    const res = await put(valid());
    expect(res.statusCode, res.body).toBe(200);
    const { updatedAt, ...view } = res.json() as Record<string, unknown>;
    expect(typeof updatedAt).toBe('string');
    expect(view).toEqual({
      object: 'sso_settings',
      configured: true,
      redirectUri: SSO_REDIRECT_URI,
      slug: 'globex',
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecretSet: true,
      enabled: true,
      ssoRequired: false,
      emailDomains: ['globex.test'],
      autoJoin: false,
      defaultRole: 'viewer',
      groupsClaim: 'groups',
      groupRoles: { admins: 'admin' },
    });
    expect((await get()).body).not.toContain(idp.clientSecret);
    const { rows } = await db.query<{ sealed: string }>(
      'SELECT client_secret_sealed AS sealed FROM workspace_sso WHERE workspace_id = $1',
      [owner.workspaceId],
    );
    expect(rows[0]!.sealed).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(rows[0]!.sealed).not.toContain(idp.clientSecret);
    expect(t.logs.join('')).not.toContain(idp.clientSecret);
  });

  it('keeps the stored secret when clientSecret is left out, removes it with null', async () => {
    const { clientSecret: _drop, ...withoutSecret } = valid();
    expect((await put(withoutSecret)).json().clientSecretSet).toBe(true);
    expect((await put({ ...withoutSecret, clientSecret: null })).json().clientSecretSet).toBe(false);
    expect((await put(valid())).json().clientSecretSet).toBe(true);
  });

  it('records each change as an audit event naming the settings, never the secret', async () => {
    await put({ ...valid(), ssoRequired: true, clientSecret: 'a-new-secret-value-0001' }, owner, {
      'user-agent': 'settings-test/2',
    });
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/console/audit-events?action=sso_update',
      headers: { cookie: owner.cookie },
    });
    const [latest] = res.json().data as Record<string, unknown>[];
    expect(latest).toMatchObject({
      action: 'sso_update',
      actor: expect.stringMatching(/^user:/),
      ip: '127.0.0.1',
      userAgent: 'settings-test/2',
      details: { changed: ['ssoRequired', 'clientSecret'], enabled: true, ssoRequired: true },
    });
    expect(res.body).not.toContain('a-new-secret-value-0001');
    await put(valid());
  });
});

describe('another workspace', () => {
  it("sees its own (unconfigured) settings, never another's", async () => {
    const res = await get(other);
    expect(res.json()).toMatchObject({ configured: false, slug: null, issuer: null });
  });

  it("cannot take another workspace's slug or email domain (409)", async () => {
    const slug = await put({ ...valid(), emailDomains: [] }, other);
    expect(slug.json()).toEqual(
      problemDocument(409, 'conflict', 'Conflict', 'Another workspace uses this slug; choose another.'),
    );
    const domain = await put({ ...valid(), slug: 'other-co' }, other);
    expect(domain.json()).toEqual(
      problemDocument(
        409,
        'conflict',
        'Conflict',
        'One of these email domains belongs to another workspace.',
      ),
    );
  });

  it('a slug or domain without enabled SSO starts nothing (404)', async () => {
    expect(
      (await put({ ...valid(), slug: 'dormant', emailDomains: ['dormant.test'], enabled: false }, other))
        .statusCode,
    ).toBe(200);
    const notFound = problemDocument(404, 'not_found', 'Not found', 'No such workspace with single sign-on.');
    for (const payload of [
      { workspace: 'dormant' },
      { email: 'a@dormant.test' },
      { workspace: 'no-such-co' },
    ]) {
      const res = await t.app.inject({ method: 'POST', url: '/api/console/sso/start', payload });
      expect(res.json()).toEqual(notFound);
    }
  });
});

describe('hostile input', () => {
  it('refuses a missing session and a missing CSRF token', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/console/sso' })).statusCode).toBe(401);
    const noCsrf = await t.app.inject({
      method: 'PUT',
      url: '/api/console/sso',
      headers: { cookie: owner.cookie },
      payload: valid(),
    });
    expect(noCsrf.json().code).toBe('csrf_failed');
  });

  it('refuses issuers outside the outbound rule, with the field named', async () => {
    for (const [issuer, message] of [
      ['https://10.0.0.7', 'must not point to a private, loopback or internal host'],
      ['http://idp.example.com', 'must be an https URL'],
      ['https://user:pw@idp.example.com', 'must not contain credentials'],
      ['https://metadata.google.internal', 'must not point to a private, loopback or internal host'],
    ] as const) {
      const res = await put({ ...valid(), issuer });
      expect(res.json(), issuer).toEqual(invalid([{ path: '/issuer', message }]));
    }
  });

  it('refuses owner as a mapped or default role, unknown fields, SSO required while disabled', async () => {
    expect((await put({ ...valid(), groupRoles: { x: 'owner' } })).statusCode).toBe(400);
    expect((await put({ ...valid(), defaultRole: 'owner' })).statusCode).toBe(400);
    expect((await put({ ...valid(), isAdmin: true })).statusCode).toBe(400);
    expect((await put({ ...valid(), enabled: false, ssoRequired: true })).json()).toEqual(
      invalid([{ path: '/ssoRequired', message: 'needs single sign-on enabled' }]),
    );
    expect((await put({ ...valid(), autoJoin: true, emailDomains: [] })).json()).toEqual(
      invalid([{ path: '/emailDomains', message: 'auto-join needs at least one email domain' }]),
    );
    expect((await put({ ...valid(), slug: 'Bad Slug!' })).statusCode).toBe(400);
    expect((await put({ ...valid(), emailDomains: ['not a domain'] })).statusCode).toBe(400);
  });

  it('refuses malformed JSON, a non-JSON body and an oversized one', async () => {
    const malformed = await t.app.inject({
      method: 'PUT',
      url: '/api/console/sso',
      headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf, 'content-type': 'application/json' },
      payload: '{"slug":',
    });
    expect(malformed.statusCode).toBe(400);
    const text = await t.app.inject({
      method: 'PUT',
      url: '/api/console/sso',
      headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf, 'content-type': 'text/plain' },
      payload: 'slug=x',
    });
    expect(text.statusCode).toBe(415);
    const big = await put({ ...valid(), groupRoles: { ['g'.repeat(40_000)]: 'admin' } });
    expect(big.statusCode).toBe(413);
  });

  it('refuses hostile starts and callbacks with problem documents', async () => {
    const start = (payload: unknown) =>
      t.app.inject({
        method: 'POST',
        url: '/api/console/sso/start',
        payload: payload as Record<string, unknown>,
      });
    expect((await start({ workspace: 'globex', email: 'a@globex.test' })).statusCode).toBe(400);
    expect((await start({})).statusCode).toBe(400);
    expect((await start({ workspace: '../../etc' })).statusCode).toBe(400);
    const cb = (query: string) => t.app.inject({ method: 'GET', url: `/api/console/sso/callback${query}` });
    expect((await cb('')).statusCode).toBe(400);
    expect((await cb(`?state=${'s'.repeat(500)}&code=x`)).statusCode).toBe(400);
    const unknown = await cb(`?state=${'s'.repeat(43)}&code=x`);
    expect(unknown.json()).toEqual(
      problemDocument(
        401,
        'sso_failed',
        'Single sign-on failed',
        'This sign-in was not started in this browser; start again.',
      ),
    );
    expect(unknown.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('answers 503 with Retry-After when the provider cannot be reached at the callback', async () => {
    const down = await startOidcProvider({ redirectUri: SSO_REDIRECT_URI });
    const res = await put({ ...valid(), slug: 'downco', issuer: down.issuer, emailDomains: [] }, other);
    expect(res.statusCode, res.body).toBe(200);
    // Discovered when saved: the start needs no call; the code exchange does, and finds no one.
    const started = await startSso(t.app, { workspace: 'downco' });
    await down.close();
    const state = new URL(started.authorizationUrl).searchParams.get('state')!;
    const cb = await t.app.inject({
      method: 'GET',
      url: `/api/console/sso/callback?state=${state}&code=abc&iss=${encodeURIComponent(down.issuer)}`,
      headers: { cookie: started.browserCookie },
    });
    expect(cb.statusCode).toBe(503);
    expect(cb.headers['retry-after']).toBe('30');
    expect(cb.json()).toEqual(
      problemDocument(
        503,
        'sso_unavailable',
        'Identity provider unavailable',
        "The workspace's identity provider cannot be reached; try again.",
      ),
    );
  });
});
