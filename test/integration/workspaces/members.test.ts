import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY } from '../../helpers/clock.js';
import { logIn, seedMember } from '../../helpers/members.js';
import { problemDocument } from '../../helpers/problem.js';
import { startSmtpServer } from '../../helpers/smtp.js';
import { signUp, startTestApp, TEST_PEPPER, type TestApp } from '../../helpers/test-app.js';

/**
 * Members and invitations through the console API (docs/console.md#members-and-roles,
 * docs/console.md#invitations), with invitation emails sent to a real SMTP server.
 */
let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let owner: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;
const BASE = 'https://triage.example.com';
const UA = 'members-test/1.0';

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestApp({
    env: { SMTP_URL: smtp.url, MAIL_FROM: 'VulnTriage <ops@example.com>', PUBLIC_BASE_URL: BASE },
  });
  owner = await signUp(t.app, { workspaceName: 'Acme "Security"' });
  other = await signUp(t.app, { workspaceName: 'Other Co' });
});

afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

type Who = { cookie: string; csrf: string };

function call(
  who: Who | null,
  method: string,
  url: string,
  payload?: unknown,
  extra: Record<string, string> = {},
) {
  return t.app.inject({
    method: method as 'POST',
    url: `/api/console${url}`,
    headers: { 'user-agent': UA, ...(who ? { cookie: who.cookie, 'x-csrf-token': who.csrf } : {}), ...extra },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

async function invite(who: Who, email: string, role: string) {
  const res = await call(who, 'POST', '/invitations', { email, role });
  expect(res.statusCode, res.body).toBe(201);
  const body = res.json() as { id: string; invitationUrl: string };
  return { ...body, token: body.invitationUrl.split('/').pop()! };
}

function sessionOf(res: { headers: Record<string, unknown>; json(): unknown }): Who {
  return {
    cookie: String(res.headers['set-cookie']).split(';')[0]!,
    csrf: (res.json() as { csrfToken: string }).csrfToken,
  };
}

const expired = problemDocument(
  410,
  'invitation_expired',
  'Invitation expired',
  'This invitation was already used, revoked, or is older than 7 days: ask for a new one.',
);

describe('invitations', () => {
  it('shows the link once, emails it, and a new person accepts it once', async () => {
    const res = await call(owner, 'POST', '/invitations', {
      email: 'new.person@example.com',
      role: 'member',
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const created = res.json() as Record<string, unknown> & { invitationUrl: string };
    expect(created).toEqual({
      id: expect.any(String),
      email: 'new.person@example.com',
      role: 'member',
      invitedBy: expect.stringMatching(/^user:/),
      createdAt: expect.any(String),
      expiresAt: new Date(t.clock().getTime() + 7 * DAY).toISOString(),
      invitationUrl: expect.stringMatching(new RegExp(`^${BASE}/invitations/[A-Za-z0-9_-]{40,}$`)),
      emailed: true,
    });
    const token = created.invitationUrl.split('/').pop()!;

    const mail = await smtp.next('new.person@example.com');
    expect(mail.to).toEqual(['new.person@example.com']);
    expect(mail.from).toBe('ops@example.com');
    expect(mail.subject).toBe('You are invited to Acme "Security" on VulnTriage');
    expect(mail.text).toContain(
      `${owner.email} invites you to join the workspace "Acme "Security"" as member.`,
    );
    expect(mail.text.match(/https?:\/\/\S+/g)).toEqual([created.invitationUrl]);
    for (const secret of [owner.key, owner.csrf, owner.cookie.split('=')[1]!, TEST_PEPPER]) {
      expect(mail.raw).not.toContain(secret);
    }

    // The link is never listed again.
    const list = await call(owner, 'GET', '/invitations');
    expect(list.json()).toEqual({
      object: 'list',
      data: [expect.not.objectContaining({ invitationUrl: expect.anything() })],
    });

    const look = await call(null, 'GET', `/invitations/${token}`);
    expect(look.json()).toEqual({
      workspaceName: 'Acme "Security"',
      email: 'new.person@example.com',
      role: 'member',
      invitedBy: owner.email,
      expiresAt: created.expiresAt,
      hasAccount: false,
    });

    const accept = await call(null, 'POST', `/invitations/${token}/accept`, {
      password: 'a new long password',
    });
    expect(accept.statusCode, accept.body).toBe(201);
    expect(accept.json()).toEqual({ workspaceId: owner.workspaceId, csrfToken: expect.any(String) });
    const member = sessionOf(accept);
    const me = await call(member, 'GET', '/session');
    expect(me.json()).toMatchObject({ workspaceId: owner.workspaceId, role: 'member' });

    const again = await call(null, 'POST', `/invitations/${token}/accept`, {
      password: 'a new long password',
    });
    expect(again.statusCode).toBe(410);
    expect(again.json()).toEqual(expired);
    expect((await call(null, 'GET', `/invitations/${token}`)).json()).toEqual(expired);

    const members = (await call(owner, 'GET', '/members')).json() as {
      data: { email: string; role: string }[];
    };
    expect(members.data.map((m) => [m.email, m.role])).toEqual([
      [owner.email, 'owner'],
      ['new.person@example.com', 'member'],
    ]);
    // Signing in later works with the chosen password.
    await logIn(t.app, 'new.person@example.com', 'a new long password');
  });

  it('refuses an invitation older than 7 days with 410', async () => {
    const inv = await invite(owner, 'late@example.com', 'viewer');
    t.clock.advance(7 * DAY + 1000);
    const res = await call(null, 'POST', `/invitations/${inv.token}/accept`, {
      password: 'a new long password',
    });
    expect(res.statusCode).toBe(410);
    expect(res.json()).toEqual(expired);
    t.clock.advance(-(7 * DAY + 1000)); // back, so the suite's sessions (12 hours) live on
  });

  it("revokes an invitation; another workspace's invitation id is 404", async () => {
    const inv = await invite(owner, 'revoked@example.com', 'viewer');
    const foreign = await call(other, 'DELETE', `/invitations/${inv.id}`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(problemDocument(404, 'not_found', 'Not found', 'No such invitation.'));
    expect((await call(owner, 'DELETE', '/invitations/not-a-uuid')).statusCode).toBe(404);
    expect((await call(owner, 'DELETE', `/invitations/${inv.id}`)).statusCode).toBe(204);
    const res = await call(null, 'POST', `/invitations/${inv.token}/accept`, {
      password: 'a new long password',
    });
    expect(res.json()).toEqual(expired);
    const open = (await call(owner, 'GET', '/invitations')).json() as { data: { id: string }[] };
    expect(open.data.map((i) => i.id)).not.toContain(inv.id);
  });

  it('adds a person with an account to a second workspace, and they switch between them', async () => {
    const inv = await invite(owner, other.email.toUpperCase(), 'admin');
    expect((await call(null, 'GET', `/invitations/${inv.token}`)).json()).toMatchObject({ hasAccount: true });
    // Without the session, the existing account's password is needed, and a wrong one is refused.
    const wrong = await call(null, 'POST', `/invitations/${inv.token}/accept`, {
      password: 'not the password',
    });
    expect(wrong.statusCode).toBe(401);
    // Signed in, with the session's CSRF token.
    const noCsrf = await call(
      { cookie: other.cookie, csrf: 'x'.repeat(32) },
      'POST',
      `/invitations/${inv.token}/accept`,
    );
    expect(noCsrf.statusCode).toBe(403);
    const res = await call(other, 'POST', `/invitations/${inv.token}/accept`, {});
    expect(res.statusCode, res.body).toBe(201);
    const inOwners = sessionOf(res);
    expect((await call(inOwners, 'GET', '/session')).json()).toMatchObject({
      workspaceId: owner.workspaceId,
      role: 'admin',
    });
    const list = (await call(inOwners, 'GET', '/workspaces')).json() as { data: unknown[] };
    expect(list.data).toHaveLength(2);
    expect(list.data).toEqual(
      expect.arrayContaining([
        { id: other.workspaceId, name: 'Other Co', role: 'owner', current: false },
        { id: owner.workspaceId, name: 'Acme "Security"', role: 'admin', current: true },
      ]),
    );
    const back = await call(inOwners, 'POST', '/workspace', { workspaceId: other.workspaceId });
    expect(back.statusCode).toBe(200);
    const home = sessionOf(back);
    expect((await call(home, 'GET', '/session')).json()).toMatchObject({
      workspaceId: other.workspaceId,
      role: 'owner',
    });
    // The session it replaced has ended.
    expect((await call(inOwners, 'GET', '/session')).statusCode).toBe(401);
    other = { ...other, ...home };
  });

  it('will not switch to a workspace the person is not a member of (404)', async () => {
    const stranger = await signUp(t.app);
    for (const workspaceId of [stranger.workspaceId, 'not-a-uuid']) {
      const res = await call(other, 'POST', '/workspace', { workspaceId });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(problemDocument(404, 'not_found', 'Not found', 'No such workspace.'));
    }
  });

  it('lets only an owner invite an owner', async () => {
    const admin = await seedMember(t.app, t.databaseUrl, owner.workspaceId, 'admin');
    const res = await call(admin, 'POST', '/invitations', { email: 'boss@example.com', role: 'owner' });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(
      problemDocument(403, 'insufficient_role', 'Insufficient role', 'Only an owner may invite an owner.'),
    );
  });

  it('refuses inviting a present member (409)', async () => {
    const res = await call(owner, 'POST', '/invitations', { email: owner.email, role: 'viewer' });
    expect(res.statusCode).toBe(409);
  });

  it('answers hostile and oversized input with problem documents', async () => {
    const cases: [string, string, unknown, number][] = [
      ['POST', '/invitations', { email: 'not an email', role: 'member' }, 400],
      ['POST', '/invitations', { email: 'a@example.com', role: 'god' }, 400],
      ['POST', '/invitations', { email: 'a@example.com', role: 'member', extra: 1 }, 400],
      ['POST', '/invitations', { email: `${'a'.repeat(5000)}@example.com`, role: 'member' }, 413],
      ['POST', '/invitations', { email: '<script>@example.com\r\nBcc: x@evil.test', role: 'member' }, 400],
      ['GET', '/invitations/..%2F..%2Fetc', undefined, 400],
      ['GET', `/invitations/${'A'.repeat(40)}`, undefined, 404],
      ['POST', `/invitations/${'A'.repeat(40)}/accept`, { password: 'short' }, 400],
      ['POST', `/invitations/${'A'.repeat(40)}/accept`, { password: 'long enough password' }, 404],
      ['PATCH', '/members/00000000-0000-0000-0000-000000000000', { role: 'owner', more: true }, 400],
      ['PATCH', '/members/not-a-uuid', { role: 'viewer' }, 404],
      ['POST', '/ownership', { userId: 42 }, 400],
      ['POST', '/workspace', {}, 400],
    ];
    for (const [method, url, payload, status] of cases) {
      const res = await call(owner, method, url, payload);
      expect({ method, url, status: res.statusCode }).toEqual({ method, url, status });
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });
});

describe('members', () => {
  it("answers another workspace's member ids with 404", async () => {
    const foreign = await seedMember(t.app, t.databaseUrl, other.workspaceId, 'member');
    const notFound = problemDocument(404, 'not_found', 'Not found', 'No such member.');
    for (const [method, url, payload] of [
      ['PATCH', `/members/${foreign.userId}`, { role: 'viewer' }],
      ['DELETE', `/members/${foreign.userId}`, undefined],
      ['POST', '/ownership', { userId: foreign.userId }],
    ] as const) {
      const res = await call(owner, method, url, payload);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(notFound);
    }
    expect((await call(foreign, 'GET', '/session')).statusCode).toBe(200);
  });

  it("ends a removed member's live session at its next request", async () => {
    const member = await seedMember(t.app, t.databaseUrl, owner.workspaceId, 'member');
    expect((await call(member, 'GET', '/cases')).statusCode).toBe(200);
    const res = await call(owner, 'DELETE', `/members/${member.userId}`);
    expect(res.statusCode).toBe(204);
    const after = await call(member, 'GET', '/cases');
    expect(after.statusCode).toBe(401);
    expect(after.json()).toEqual(
      problemDocument(401, 'unauthenticated', 'Not signed in', 'Sign in to the console first.'),
    );
  });

  it('changes a role, and keeps the workspace with at least one owner', async () => {
    const admin = await seedMember(t.app, t.databaseUrl, owner.workspaceId, 'admin');
    const viewer = await seedMember(t.app, t.databaseUrl, owner.workspaceId, 'viewer');
    const up = await call(admin, 'PATCH', `/members/${viewer.userId}`, { role: 'member' });
    expect(up.json()).toMatchObject({ userId: viewer.userId, role: 'member' });
    const ownerId = (await call(owner, 'GET', '/session')).json().userId as string;
    // An admin may not touch an owner.
    const demoteByAdmin = await call(admin, 'PATCH', `/members/${ownerId}`, { role: 'viewer' });
    expect(demoteByAdmin.json()).toEqual(
      problemDocument(
        403,
        'insufficient_role',
        'Insufficient role',
        'Only an owner may make or unmake an owner.',
      ),
    );
    const lastOwner = problemDocument(
      409,
      'conflict',
      'Conflict',
      'A workspace keeps at least one owner: make another member owner first.',
    );
    const demoteSelf = await call(owner, 'PATCH', `/members/${ownerId}`, { role: 'admin' });
    expect(demoteSelf.json()).toEqual(lastOwner);
    const leave = await call(owner, 'DELETE', `/members/${ownerId}`);
    expect(leave.json()).toEqual(lastOwner);
    // A viewer may leave on their own.
    const quitter = await seedMember(t.app, t.databaseUrl, owner.workspaceId, 'viewer');
    expect((await call(quitter, 'DELETE', `/members/${quitter.userId}`)).statusCode).toBe(204);
    // But may not remove anyone else.
    const v2 = await seedMember(t.app, t.databaseUrl, owner.workspaceId, 'viewer');
    expect((await call(v2, 'DELETE', `/members/${admin.userId}`)).statusCode).toBe(403);
  });

  it('transfers ownership: the new owner owns, the old one stays an admin', async () => {
    const heir = await seedMember(t.app, t.databaseUrl, owner.workspaceId, 'member');
    const ownerId = (await call(owner, 'GET', '/session')).json().userId as string;
    const res = await call(owner, 'POST', '/ownership', { userId: heir.userId });
    expect(res.statusCode).toBe(204);
    expect((await call(heir, 'GET', '/session')).json()).toMatchObject({ role: 'owner' });
    expect((await call(owner, 'GET', '/session')).json()).toMatchObject({ role: 'admin' });
    // The former owner can no longer change the plan, and the new one may demote nobody into no owner.
    expect((await call(owner, 'POST', '/plan', { plan: 'free' })).statusCode).toBe(403);
    const back = await call(heir, 'POST', '/ownership', { userId: ownerId });
    expect(back.statusCode).toBe(204);
  });

  it('records invitations, acceptances, removals, role changes and transfers with actor, address and user agent', async () => {
    const res = await call(owner, 'GET', '/audit-events?limit=200');
    const events = (
      res.json() as { data: { action: string; actor: string; ip: string; userAgent: string }[] }
    ).data;
    const actions = new Set(events.map((e) => e.action));
    for (const a of [
      'invitation_create',
      'invitation_revoke',
      'invitation_accept',
      'member_remove',
      'member_role_change',
      'ownership_transfer',
    ]) {
      expect(actions, a).toContain(a);
    }
    for (const e of events.filter(
      (x) => x.action.startsWith('invitation') || x.action.startsWith('member'),
    )) {
      expect(e).toMatchObject({ actor: expect.stringMatching(/^user:/), ip: '127.0.0.1', userAgent: UA });
    }
    expect(JSON.stringify(events)).not.toMatch(/invitations\/[A-Za-z0-9_-]{20,}/);
  });
});
