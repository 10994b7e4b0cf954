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
 * Sessions and "SSO required" (docs/console.md#sso-and-sessions), against a real OpenID provider:
 * a switch into a workspace that requires SSO, a session another workspace's SSO made, the
 * members' password sessions when SSO becomes required, and the refused sign-ins in the audit log
 * (docs/console.md#failed-sign-ins).
 */
let t: TestApp;
let idp: TestOidcProvider;
let db: pg.Client;
let acme: Awaited<ReturnType<typeof signUp>>;
let beta: Awaited<ReturnType<typeof signUp>>;
const password = 'a member password 123';

function settings(ssoRequired: boolean) {
  return {
    slug: 'acme',
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    enabled: true,
    ssoRequired,
    emailDomains: ['acme.test'],
    autoJoin: false,
    defaultRole: 'member',
    groupsClaim: 'groups',
    groupRoles: {},
  };
}

async function requireSso(on: boolean) {
  const res = await t.app.inject({
    method: 'PUT',
    url: '/api/console/sso',
    headers: { cookie: acme.cookie, 'x-csrf-token': acme.csrf },
    payload: settings(on),
  });
  if (res.statusCode !== 200) throw new Error(`settings: ${res.statusCode} ${res.body}`);
}

/** A person with a password and the given roles, by workspace id (in the order given). */
async function person(email: string, roles: [string, string][]): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO console_users (id, email, password_hash) VALUES (gen_random_uuid(), $1, $2) RETURNING id`,
    [email, await hashPassword(password)],
  );
  for (const [workspaceId, role] of roles) {
    await db.query(
      `INSERT INTO memberships (user_id, workspace_id, role, created_at) VALUES ($1, $2, $3, now())`,
      [rows[0]!.id, workspaceId, role],
    );
  }
  return rows[0]!.id;
}

async function login(email: string): Promise<{ cookie: string; csrf: string; workspaceId: string }> {
  const res = await t.app.inject({ method: 'POST', url: '/api/console/login', payload: { email, password } });
  if (res.statusCode !== 200) throw new Error(`login: ${res.statusCode} ${res.body}`);
  const body = res.json() as { workspaceId: string; csrfToken: string };
  return { cookie: sessionCookieOf(res)!, csrf: body.csrfToken, workspaceId: body.workspaceId };
}

async function ssoSession(email: string): Promise<{ cookie: string; csrf: string }> {
  idp.signInAs(email, { email, email_verified: true });
  const started = await startSso(t.app, { workspace: 'acme' });
  const res = await callback(t, await atProvider(started.authorizationUrl), started.browserCookie);
  if (res.statusCode !== 200) throw new Error(`sso: ${res.statusCode} ${res.body}`);
  const cookie = sessionCookieOf(res)!;
  const me = await sessionOf(cookie);
  return { cookie, csrf: (me.json() as { csrfToken: string }).csrfToken };
}

const sessionOf = (cookie: string) =>
  t.app.inject({ method: 'GET', url: '/api/console/session', headers: { cookie } });

const switchTo = (who: { cookie: string; csrf: string }, workspaceId: string) =>
  t.app.inject({
    method: 'POST',
    url: '/api/console/workspace',
    headers: { cookie: who.cookie, 'x-csrf-token': who.csrf },
    payload: { workspaceId },
  });

beforeAll(async () => {
  t = await startTestApp({ env: SSO_ENV });
  idp = await startOidcProvider({ redirectUri: SSO_REDIRECT_URI });
  acme = await signUp(t.app, { email: 'owner@acme.test', workspaceName: 'Acme', plan: 'free' });
  beta = await signUp(t.app, { email: 'owner@beta.test', workspaceName: 'Beta', plan: 'free' });
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  await requireSso(false);
});

afterAll(async () => {
  await db?.end();
  await idp?.close();
  await t?.close();
});

describe('when SSO becomes required', () => {
  it("ends the members' password sessions at once, keeps the owner's, and says how many ended", async () => {
    await person('early@acme.test', [[acme.workspaceId, 'member']]);
    const early = await login('early@acme.test');
    expect(early.workspaceId).toBe(acme.workspaceId);
    expect((await sessionOf(early.cookie)).statusCode).toBe(200);
    await requireSso(true);
    try {
      const refused = await sessionOf(early.cookie);
      expect(refused.statusCode).toBe(401);
      expect(refused.json().code).toBe('unauthenticated');
      expect((await sessionOf(acme.cookie)).statusCode).toBe(200);
      const { rows } = await db.query<{ details: { sessionsEnded?: number; ssoRequired: boolean } }>(
        `SELECT details FROM key_audit_events WHERE workspace_id = $1 AND action = 'sso_update' ORDER BY id DESC LIMIT 1`,
        [acme.workspaceId],
      );
      expect(rows[0]!.details).toMatchObject({ ssoRequired: true, sessionsEnded: 1 });
    } finally {
      await requireSso(false);
    }
  });

  it('refuses at its next request the password session of an owner made an admin', async () => {
    const userId = await person('co-owner@acme.test', [[acme.workspaceId, 'owner']]);
    await requireSso(true);
    try {
      const coOwner = await login('co-owner@acme.test');
      expect((await sessionOf(coOwner.cookie)).statusCode).toBe(200);
      const demoted = await t.app.inject({
        method: 'PATCH',
        url: `/api/console/members/${userId}`,
        headers: { cookie: acme.cookie, 'x-csrf-token': acme.csrf },
        payload: { role: 'admin' },
      });
      expect(demoted.statusCode, demoted.body).toBe(200);
      expect((await sessionOf(coOwner.cookie)).statusCode).toBe(401);
    } finally {
      await requireSso(false);
    }
  });

  it('keeps the sessions its own SSO made', async () => {
    await person('sso-kept@acme.test', [[acme.workspaceId, 'member']]);
    const viaSso = await ssoSession('sso-kept@acme.test');
    await requireSso(true);
    try {
      expect((await sessionOf(viaSso.cookie)).statusCode).toBe(200);
    } finally {
      await requireSso(false);
    }
  });
});

describe('switching workspaces', () => {
  it('refuses a password session of a member into a workspace that requires SSO, naming where to sign in', async () => {
    await person('pat@acme.test', [
      [beta.workspaceId, 'member'],
      [acme.workspaceId, 'member'],
    ]);
    await requireSso(true);
    try {
      const pat = await login('pat@acme.test');
      expect(pat.workspaceId).toBe(beta.workspaceId);
      const res = await switchTo(pat, acme.workspaceId);
      expect(res.json()).toEqual(
        problemDocument(
          403,
          'sso_required',
          'Single sign-on required',
          'Acme requires single sign-on: sign in with SSO (workspace "acme") at /login?sso=acme to open it.',
        ),
      );
      expect(sessionCookieOf(res)).toBeNull();
      // The session stays, in its own workspace.
      expect((await sessionOf(pat.cookie)).json()).toMatchObject({ workspaceId: beta.workspaceId });
    } finally {
      await requireSso(false);
    }
  });

  it('lets an owner switch in with a password session, and never lengthens the sign-in', async () => {
    await db.query(
      `INSERT INTO memberships (user_id, workspace_id, role) SELECT id, $1, 'member' FROM console_users WHERE email = $2`,
      [beta.workspaceId, acme.email],
    );
    await requireSso(true);
    try {
      const before = (await sessionOf(acme.cookie)).json() as { expiresAt: string };
      t.clock.advance(60_000);
      const toBeta = await switchTo(acme, beta.workspaceId);
      expect(toBeta.statusCode, toBeta.body).toBe(200);
      const inBeta = {
        cookie: sessionCookieOf(toBeta)!,
        csrf: (toBeta.json() as { csrfToken: string }).csrfToken,
      };
      expect((await sessionOf(inBeta.cookie)).json()).toMatchObject({ expiresAt: before.expiresAt });
      const back = await switchTo(inBeta, acme.workspaceId);
      expect(back.statusCode, back.body).toBe(200);
      acme = {
        ...acme,
        cookie: sessionCookieOf(back)!,
        csrf: (back.json() as { csrfToken: string }).csrfToken,
      };
      expect((await sessionOf(acme.cookie)).json()).toMatchObject({
        workspaceId: acme.workspaceId,
        role: 'owner',
        expiresAt: before.expiresAt,
      });
    } finally {
      t.clock.advance(-60_000);
      await requireSso(false);
    }
  });

  it("refuses a session another workspace's SSO made, into a workspace without SSO", async () => {
    await person('sam@acme.test', [
      [acme.workspaceId, 'member'],
      [beta.workspaceId, 'admin'],
    ]);
    const viaSso = await ssoSession('sam@acme.test');
    const res = await switchTo(viaSso, beta.workspaceId);
    expect(res.json()).toEqual(
      problemDocument(
        403,
        'sign_in_required',
        'Sign-in required',
        'You signed in with the single sign-on of another workspace, which vouches for you there only: ' +
          'sign in to Beta with your password to open it.',
      ),
    );
    expect(sessionCookieOf(res)).toBeNull();
  });

  it("does not let a session another workspace's SSO made accept an invitation for its person", async () => {
    const invite = await t.app.inject({
      method: 'POST',
      url: '/api/console/invitations',
      headers: { cookie: beta.cookie, 'x-csrf-token': beta.csrf },
      payload: { email: 'sso-only@acme.test', role: 'admin' },
    });
    expect(invite.statusCode, invite.body).toBe(201);
    const token = new URL((invite.json() as { invitationUrl: string }).invitationUrl).pathname
      .split('/')
      .pop()!;
    await person('sso-only@acme.test', [[acme.workspaceId, 'member']]);
    const viaSso = await ssoSession('sso-only@acme.test');
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/console/invitations/${token}/accept`,
      headers: { cookie: viaSso.cookie, 'x-csrf-token': viaSso.csrf },
      payload: {},
    });
    expect(res.json()).toEqual(
      problemDocument(401, 'unauthenticated', 'Not signed in', 'Sign in, or give a password, to accept.'),
    );
    const withPassword = await t.app.inject({
      method: 'POST',
      url: `/api/console/invitations/${token}/accept`,
      payload: { password },
    });
    expect(withPassword.statusCode, withPassword.body).toBe(201);
  });
});

describe('refused SSO sign-ins in the audit log', () => {
  async function lastFailure() {
    const { rows } = await db.query<{ actor: string; ip: string; details: Record<string, unknown> }>(
      `SELECT actor, ip, details FROM key_audit_events
        WHERE workspace_id = $1 AND action = 'sso_sign_in_failed' ORDER BY id DESC LIMIT 1`,
      [acme.workspaceId],
    );
    return rows[0] ?? null;
  }
  const failures = async () =>
    Number(
      (await db.query(`SELECT count(*) FROM key_audit_events WHERE action = 'sso_sign_in_failed'`)).rows[0]
        .count,
    );

  it('records a response naming another issuer, with the check that failed and no code or state', async () => {
    idp.signInAs('owner-sub', { email: acme.email, email_verified: true });
    const started = await startSso(t.app, { workspace: 'acme' });
    const back = await atProvider(started.authorizationUrl);
    back.searchParams.set('iss', 'https://evil.example');
    expect((await callback(t, back, started.browserCookie)).statusCode).toBe(401);
    const event = await lastFailure();
    expect(event).toEqual({
      actor: 'anonymous',
      ip: '127.0.0.1',
      details: { reason: 'not_verified', issuer: idp.issuer, check: 'OAUTH_INVALID_RESPONSE' },
    });
    const stored = JSON.stringify(event);
    for (const secret of [
      back.searchParams.get('code')!,
      back.searchParams.get('state')!,
      idp.clientSecret,
    ]) {
      expect(stored).not.toContain(secret);
    }
    const listed = await t.app.inject({
      method: 'GET',
      url: '/api/console/audit-events?action=sso_sign_in_failed',
      headers: { cookie: acme.cookie },
    });
    expect(listed.json().data[0]).toMatchObject({ action: 'sso_sign_in_failed', actor: 'anonymous' });
  });

  it('records a replayed state, a callback in another browser and one with no browser cookie', async () => {
    idp.signInAs('owner-sub', { email: acme.email, email_verified: true });
    const started = await startSso(t.app, { workspace: 'acme' });
    const back = await atProvider(started.authorizationUrl);
    expect((await callback(t, back, null)).statusCode).toBe(401);
    expect((await lastFailure())!.details).toEqual({ reason: 'not_started_here' });
    expect((await callback(t, back, `svc_sso=${'x'.repeat(43)}`)).statusCode).toBe(401);
    expect((await lastFailure())!.details).toEqual({ reason: 'other_browser' });
    expect((await callback(t, back, started.browserCookie)).statusCode).toBe(200);
    expect((await callback(t, back, started.browserCookie)).statusCode).toBe(401);
    expect((await lastFailure())!.details).toEqual({ reason: 'state_used' });
  });

  it('records a state past its 10 minutes', async () => {
    idp.signInAs('owner-sub', { email: acme.email, email_verified: true });
    const started = await startSso(t.app, { workspace: 'acme' });
    const back = await atProvider(started.authorizationUrl);
    t.clock.advance(11 * 60_000);
    try {
      expect((await callback(t, back, started.browserCookie)).statusCode).toBe(401);
    } finally {
      t.clock.advance(-11 * 60_000);
    }
    expect((await lastFailure())!.details).toEqual({ reason: 'state_expired' });
  });

  it('records an unverified email and a person who is not a member, with the address claimed', async () => {
    idp.signInAs('unverified', { email: 'who@acme.test', email_verified: false });
    let started = await startSso(t.app, { workspace: 'acme' });
    expect(
      (await callback(t, await atProvider(started.authorizationUrl), started.browserCookie)).statusCode,
    ).toBe(401);
    expect((await lastFailure())!.details).toEqual({
      reason: 'email_unverified',
      issuer: idp.issuer,
      email: 'who@acme.test',
    });
    idp.signInAs('stranger', { email: 'stranger@elsewhere.test', email_verified: true });
    started = await startSso(t.app, { workspace: 'acme' });
    expect(
      (await callback(t, await atProvider(started.authorizationUrl), started.browserCookie)).statusCode,
    ).toBe(401);
    expect((await lastFailure())!.details).toEqual({
      reason: 'not_a_member',
      issuer: idp.issuer,
      email: 'stranger@elsewhere.test',
    });
    expect(
      (await db.query(`SELECT 1 FROM console_users WHERE email = 'stranger@elsewhere.test'`)).rowCount,
    ).toBe(0);
  });

  it('records nothing for a state nobody started (it names no workspace)', async () => {
    const before = await failures();
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/console/sso/callback?state=${'s'.repeat(43)}&code=abc&iss=${encodeURIComponent(idp.issuer)}`,
      headers: { cookie: `svc_sso=${'x'.repeat(43)}` },
    });
    expect(res.statusCode).toBe(401);
    expect(await failures()).toBe(before);
  });
});
