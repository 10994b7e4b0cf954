import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { problemDocument } from '../../helpers/problem.js';
import { startOidcProvider, type TestOidcProvider } from '../../helpers/oidc-provider.js';
import {
  SSO_ENV,
  SSO_REDIRECT_URI,
  atProvider,
  callback,
  sessionCookieOf,
  startSso,
} from '../../helpers/sso-flow.js';
import { hashPassword } from '../../../src/domain/workspaces/password.js';

/**
 * Single sign-on against a real OpenID provider on 127.0.0.1 (docs/console.md#single-sign-on):
 * the whole sign-in, then each refusal — a replayed state, another browser, an expired ID token,
 * an unverified email, a response naming another issuer, a discovery document of another issuer —
 * auto-join by email domain, the groups claim's roles, and "SSO required" for password sign-in.
 */
let t: TestApp;
let idp: TestOidcProvider;
let owner: Awaited<ReturnType<typeof signUp>>;
let db: pg.Client;

const failed = (detail: string) => problemDocument(401, 'sso_failed', 'Single sign-on failed', detail);

function settings(overrides: Record<string, unknown> = {}) {
  return {
    slug: 'acme',
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    enabled: true,
    ssoRequired: false,
    emailDomains: ['acme.test'],
    autoJoin: true,
    defaultRole: 'member',
    groupsClaim: 'groups',
    groupRoles: { 'sec-admins': 'admin', auditors: 'viewer' },
    ...overrides,
  };
}

const save = (payload: unknown, who = owner) =>
  t.app.inject({
    method: 'PUT',
    url: '/api/console/sso',
    headers: { cookie: who.cookie, 'x-csrf-token': who.csrf },
    payload: payload as Record<string, unknown>,
  });

async function roleOf(email: string): Promise<string | null> {
  const { rows } = await db.query<{ role: string }>(
    `SELECT m.role FROM memberships m JOIN console_users u ON u.id = m.user_id
      WHERE lower(u.email) = lower($1) AND m.workspace_id = $2`,
    [email, owner.workspaceId],
  );
  return rows[0]?.role ?? null;
}

/** The whole sign-in as `sub`; the callback's answer and the URL it was called with. */
async function signInWithSso(by: { workspace: string } | { email: string } = { workspace: 'acme' }) {
  const started = await startSso(t.app, by);
  const back = await atProvider(started.authorizationUrl);
  return { res: await callback(t, back, started.browserCookie), back, browserCookie: started.browserCookie };
}

beforeAll(async () => {
  t = await startTestApp({ env: SSO_ENV });
  idp = await startOidcProvider({ redirectUri: SSO_REDIRECT_URI });
  owner = await signUp(t.app, { email: `owner@acme.test`, plan: 'free' });
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  const res = await save(settings());
  if (res.statusCode !== 200) throw new Error(`settings: ${res.statusCode} ${res.body}`);
});

afterAll(async () => {
  await db?.end();
  await idp?.close();
  await t?.close();
});

describe('signing in with SSO', () => {
  it('signs an existing member in: a session of the workspace, an audit event with address and agent', async () => {
    idp.signInAs('owner-sub', { email: owner.email, email_verified: true, groups: ['auditors'] });
    const started = await startSso(t.app, { workspace: 'acme' });
    const at = new URL(started.authorizationUrl);
    expect(at.origin).toBe(idp.issuer);
    expect(at.searchParams.get('code_challenge_method')).toBe('S256');
    expect(at.searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(at.searchParams.get('redirect_uri')).toBe(SSO_REDIRECT_URI);
    const back = await atProvider(started.authorizationUrl);
    const res = await t.app.inject({
      method: 'GET',
      url: `${back.pathname}${back.search}`,
      headers: { cookie: started.browserCookie, 'user-agent': 'sso-test-browser/1.0' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('url=/');
    const cookie = sessionCookieOf(res);
    expect(cookie).not.toBeNull();
    // The code and the state of the redirect back are masked in the request log.
    const logged = t.logs.join('');
    expect(logged).toContain('/api/console/sso/callback?');
    expect(logged).not.toContain(back.searchParams.get('code')!);
    expect(logged).not.toContain(back.searchParams.get('state')!);
    const session = await t.app.inject({
      method: 'GET',
      url: '/api/console/session',
      headers: { cookie: cookie! },
    });
    expect(session.json()).toMatchObject({ workspaceId: owner.workspaceId });
    // The groups claim never changes an owner's role.
    expect(await roleOf(owner.email)).toBe('owner');
    const audit = await t.app.inject({
      method: 'GET',
      url: '/api/console/audit-events?action=sso_sign_in',
      headers: { cookie: owner.cookie },
    });
    expect(audit.json().data[0]).toMatchObject({
      action: 'sso_sign_in',
      actor: `user:${(session.json() as { userId: string }).userId}`,
      ip: '127.0.0.1',
      userAgent: 'sso-test-browser/1.0',
      details: { email: owner.email, issuer: idp.issuer, role: 'owner', joined: false },
    });
  });

  it('finds the workspace from an email address of its domain', async () => {
    idp.signInAs('owner-sub', { email: owner.email, email_verified: true });
    const { res } = await signInWithSso({ email: 'someone@ACME.test' });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('refuses a replayed state: the same callback a second time', async () => {
    idp.signInAs('owner-sub', { email: owner.email, email_verified: true });
    const { res, back, browserCookie } = await signInWithSso();
    expect(res.statusCode).toBe(200);
    const again = await callback(t, back, browserCookie);
    expect(again.statusCode).toBe(401);
    expect(again.json()).toEqual(
      failed('This sign-in link was already used, has expired or is unknown; start again.'),
    );
    expect(sessionCookieOf(again)).toBeNull();
  });

  it('refuses a callback in a browser that did not start the sign-in (and keeps it for the one that did)', async () => {
    idp.signInAs('owner-sub', { email: owner.email, email_verified: true });
    const started = await startSso(t.app, { workspace: 'acme' });
    const back = await atProvider(started.authorizationUrl);
    const none = await callback(t, back, null);
    expect(none.json()).toEqual(failed('This sign-in was not started in this browser; start again.'));
    const other = await callback(t, back, `svc_sso=${'x'.repeat(43)}`);
    expect(other.statusCode).toBe(401);
    expect((await callback(t, back, started.browserCookie)).statusCode).toBe(200);
  });

  it('refuses an ID token that expired before it reached the service', async () => {
    idp.signInAs('owner-sub', { email: owner.email, email_verified: true });
    const started = await startSso(t.app, { workspace: 'acme' });
    const back = await atProvider(started.authorizationUrl);
    // The provider's ID tokens live 60 s; the service's clock is 5 minutes on (the sign-in itself lasts 10).
    t.clock.advance(5 * 60_000);
    try {
      const res = await callback(t, back, started.browserCookie);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(
        failed("The identity provider's answer could not be verified (OAUTH_JWT_TIMESTAMP_CHECK_FAILED)."),
      );
      expect(sessionCookieOf(res)).toBeNull();
    } finally {
      t.clock.advance(-5 * 60_000);
    }
  });

  it('refuses an email the provider does not call verified', async () => {
    idp.signInAs('unverified-sub', { email: owner.email, email_verified: false });
    const { res } = await signInWithSso();
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(failed('The identity provider does not say this email address is verified.'));
  });

  it('refuses a response that names another issuer', async () => {
    idp.signInAs('owner-sub', { email: owner.email, email_verified: true });
    const started = await startSso(t.app, { workspace: 'acme' });
    const back = await atProvider(started.authorizationUrl);
    back.searchParams.set('iss', 'https://evil.example');
    const res = await callback(t, back, started.browserCookie);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(
      failed("The identity provider's answer could not be verified (OAUTH_INVALID_RESPONSE)."),
    );
    expect(sessionCookieOf(res)).toBeNull();
  });

  it('refuses the provider refusing (error=access_denied), without repeating its text', async () => {
    const started = await startSso(t.app, { workspace: 'acme' });
    const state = new URL(started.authorizationUrl).searchParams.get('state')!;
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/console/sso/callback?state=${state}&error=access_denied%3Cscript%3E&error_description=nope&iss=${encodeURIComponent(idp.issuer)}`,
      headers: { cookie: started.browserCookie },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toBe(
      "The identity provider's answer could not be verified (provider_error:access_deniedscript).",
    );
  });
});

describe('who gets in', () => {
  it('auto-joins a new person of a listed domain with the role their groups map to', async () => {
    idp.signInAs('new-admin', {
      email: 'lead@acme.test',
      email_verified: true,
      groups: ['staff', 'sec-admins'],
    });
    const { res } = await signInWithSso();
    expect(res.statusCode, res.body).toBe(200);
    expect(await roleOf('lead@acme.test')).toBe('admin');
  });

  it('auto-joins with the default role when no group is mapped, and follows the groups at each sign-in', async () => {
    idp.signInAs('analyst', { email: 'analyst@acme.test', email_verified: true, groups: ['staff'] });
    expect((await signInWithSso()).res.statusCode).toBe(200);
    expect(await roleOf('analyst@acme.test')).toBe('member');
    idp.signInAs('analyst', { email: 'analyst@acme.test', email_verified: true, groups: ['auditors'] });
    const again = await signInWithSso();
    expect(again.res.statusCode).toBe(200);
    expect(await roleOf('analyst@acme.test')).toBe('viewer');
    // The session holds the mapped role: a viewer neither reads nor changes the SSO settings.
    const cookie = sessionCookieOf(again.res)!;
    const session = await t.app.inject({ method: 'GET', url: '/api/console/session', headers: { cookie } });
    const csrf = (session.json() as { csrfToken: string }).csrfToken;
    for (const res of [
      await t.app.inject({ method: 'GET', url: '/api/console/sso', headers: { cookie } }),
      await t.app.inject({
        method: 'PUT',
        url: '/api/console/sso',
        headers: { cookie, 'x-csrf-token': csrf },
        payload: settings(),
      }),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('insufficient_role');
    }
  });

  it('refuses a person of another domain who is not a member', async () => {
    idp.signInAs('stranger', {
      email: 'someone@elsewhere.test',
      email_verified: true,
      groups: ['sec-admins'],
    });
    const { res } = await signInWithSso();
    expect(res.json()).toEqual(
      failed('This person is not a member of the workspace; ask an admin for an invitation.'),
    );
    expect(await roleOf('someone@elsewhere.test')).toBeNull();
  });

  it('refuses a person of the domain when auto-join is off', async () => {
    expect((await save({ ...settings({ autoJoin: false }), clientSecret: undefined })).statusCode).toBe(200);
    try {
      idp.signInAs('late', { email: 'late@acme.test', email_verified: true });
      const { res } = await signInWithSso();
      expect(res.statusCode).toBe(401);
      expect(await roleOf('late@acme.test')).toBeNull();
    } finally {
      await save({ ...settings(), clientSecret: undefined });
    }
  });

  it('a person made by SSO has no password that works', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/console/login',
      payload: { email: 'lead@acme.test', password: 'sso-only' },
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('SSO required', () => {
  let memberEmail: string;
  const password = 'a member password 123';

  beforeAll(async () => {
    memberEmail = 'pw-member@acme.test';
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO console_users (id, email, password_hash) VALUES (gen_random_uuid(), $1, $2) RETURNING id`,
      [memberEmail, await hashPassword(password)],
    );
    await db.query(`INSERT INTO memberships (user_id, workspace_id, role) VALUES ($1, $2, 'member')`, [
      rows[0]!.id,
      owner.workspaceId,
    ]);
    expect((await save({ ...settings({ ssoRequired: true }), clientSecret: undefined })).statusCode).toBe(
      200,
    );
  });

  const login = (email: string, pw: string) =>
    t.app.inject({ method: 'POST', url: '/api/console/login', payload: { email, password: pw } });

  it("refuses a member's password sign-in", async () => {
    const res = await login(memberEmail, password);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(
      problemDocument(
        403,
        'sso_required',
        'Single sign-on required',
        'This workspace requires single sign-on: use "Sign in with SSO".',
      ),
    );
    expect(sessionCookieOf(res)).toBeNull();
  });

  it('says nothing of SSO to a wrong password', async () => {
    const res = await login(memberEmail, 'not the password at all');
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('unauthenticated');
  });

  it('keeps the owners a password way in (the recovery path when the provider fails)', async () => {
    const res = await login(owner.email, owner.password);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ workspaceId: owner.workspaceId });
  });

  it('lets the member in through SSO', async () => {
    idp.signInAs('pw-member', { email: memberEmail, email_verified: true });
    expect((await signInWithSso()).res.statusCode).toBe(200);
  });
});

describe('a provider that is not what it claims', () => {
  let impostor: http.Server;
  let impostorUrl: string;

  beforeAll(async () => {
    // Serves the real provider's discovery document under another address: it names another issuer.
    impostor = http.createServer((_req, res) => {
      void fetch(`${idp.issuer}/.well-known/openid-configuration`)
        .then((r) => r.text())
        .then((body) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    });
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    impostorUrl = `http://127.0.0.1:${(impostor.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => impostor.close(() => resolve())));

  it('refuses settings whose discovery document names another issuer', async () => {
    const other = await signUp(t.app, { plan: 'free' });
    const res = await save(
      settings({ slug: 'impostor', issuer: impostorUrl, emailDomains: [], autoJoin: false }),
      other,
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([
      { path: '/issuer', message: 'the discovery document is not valid for this issuer' },
    ]);
  });
});
