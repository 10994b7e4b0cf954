import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { seedMember, type MemberSession } from '../../helpers/members.js';
import { problemDocument } from '../../helpers/problem.js';
import { registeredRoutes } from '../../../src/api/plugins/openapi.js';
import type { Role } from '../../../src/domain/workspaces/roles.js';

/**
 * What each role may do in the console (docs/console.md#members-and-roles). The write sweep
 * reads every console route the app registered, so a route added later is swept too.
 */
let t: TestApp;
let owner: Awaited<ReturnType<typeof signUp>>;
const members = {} as Record<Exclude<Role, 'owner'>, MemberSession>;
let consoleWrites: { method: string; url: string }[];
const ID = '00000000-0000-0000-0000-000000000000';

/**
 * Public console routes need no role: sign-up, sign-in and out, an invitation's acceptance and
 * password reset (a person without a session, or joining another workspace).
 */
const NO_ROLE = new Set([
  'POST /api/console/signup',
  'POST /api/console/login',
  'POST /api/console/logout',
  'POST /api/console/sso/start',
  'POST /api/console/invitations/:token/accept',
  'POST /api/console/password-reset',
  'POST /api/console/password-reset/:token',
]);
/**
 * Writes a viewer may make, about themselves rather than the workspace: switching to another of
 * their workspaces, and leaving this one (members.test.ts covers both). Starting an export reads
 * cases, so a viewer may (docs/console.md#members-and-roles).
 */
const VIEWER_MAY = new Set([
  'POST /api/console/workspace',
  'DELETE /api/console/members/:userId',
  'POST /api/console/exports',
]);

beforeAll(async () => {
  t = await startTestApp();
  owner = await signUp(t.app, { plan: 'free' });
  for (const role of ['viewer', 'member', 'admin'] as const) {
    members[role] = await seedMember(t.app, t.databaseUrl, owner.workspaceId, role);
  }
  consoleWrites = registeredRoutes(t.app)
    .filter((r) => r.url.startsWith('/api/console/') && r.method !== 'GET')
    .filter((r) => !NO_ROLE.has(`${r.method} ${r.url}`) && !VIEWER_MAY.has(`${r.method} ${r.url}`))
    .map((r) => ({ method: r.method, url: r.url.replace(/:[A-Za-z]+/g, ID) }));
});

afterAll(async () => {
  await t?.close();
});

function call(who: { cookie: string; csrf: string }, method: string, url: string, payload?: unknown) {
  return t.app.inject({
    method: method as 'POST',
    url,
    headers: { cookie: who.cookie, 'x-csrf-token': who.csrf },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

const roleProblem = (needed: Role, role: Role) =>
  problemDocument(
    403,
    'insufficient_role',
    'Insufficient role',
    `This needs the ${needed} role or higher in this workspace; you are ${role === 'admin' ? 'an' : 'a'} ${role}.`,
  );

describe('console roles', () => {
  it('finds the console write routes to sweep', () => {
    expect(consoleWrites.length).toBeGreaterThanOrEqual(15);
    expect(consoleWrites).toContainEqual({ method: 'POST', url: '/api/console/keys' });
    expect(consoleWrites).toContainEqual({ method: 'POST', url: '/api/console/cases/status' });
  });

  it("refuses every viewer's write with 403 insufficient_role, whatever the body", async () => {
    for (const { method, url } of consoleWrites) {
      const res = await call(members.viewer, method, url, { anything: 'at all' });
      expect({ method, url, status: res.statusCode }).toEqual({ method, url, status: 403 });
      expect(res.json()).toMatchObject({ code: 'insufficient_role' });
    }
  });

  it('lets a viewer read scans, cases, the dashboard, the statement and the session', async () => {
    for (const url of ['/scans', '/cases', '/dashboard', '/statement', '/workspace', '/workflows']) {
      const res = await call(members.viewer, 'GET', `/api/console${url}`);
      expect({ url, status: res.statusCode }).toEqual({ url, status: 200 });
    }
    const session = await call(members.viewer, 'GET', '/api/console/session');
    expect(session.json()).toMatchObject({ role: 'viewer', workspaceId: owner.workspaceId });
  });

  it('keeps keys and the audit log from a viewer and a member, with the whole problem', async () => {
    for (const role of ['viewer', 'member'] as const) {
      for (const url of ['/api/console/keys', '/api/console/audit-events']) {
        const res = await call(members[role], 'GET', url);
        expect(res.statusCode).toBe(403);
        expect(res.json()).toEqual(roleProblem('admin', role));
      }
    }
  });

  it('lets a member change a case and triage, but not a workflow or a key', async () => {
    const status = await call(members.member, 'POST', '/api/console/cases/status', {
      status: 'in_progress',
      caseIds: [ID],
    });
    expect(status.json()).toMatchObject({ changed: 0, notFound: 1 });
    const preview = await call(members.member, 'POST', '/api/console/cases/triage/preview', {
      caseIds: [ID],
    });
    expect(preview.statusCode).toBe(200);
    const workflow = await call(members.member, 'POST', '/api/console/workflows', {});
    expect(workflow.json()).toEqual(roleProblem('admin', 'member'));
    const key = await call(members.member, 'POST', '/api/console/keys', {
      label: 'x',
      scopes: ['scans:read'],
    });
    expect(key.json()).toEqual(roleProblem('admin', 'member'));
  });

  it('lets an admin make a key but keeps the plan for owners', async () => {
    const key = await call(members.admin, 'POST', '/api/console/keys', {
      label: 'ci',
      scopes: ['scans:read'],
    });
    expect(key.statusCode).toBe(201);
    const reveal = await call(
      members.admin,
      'GET',
      `/api/console${(key.json() as { revealUrl: string }).revealUrl}`,
    );
    expect(reveal.statusCode).toBe(200);
    const plan = await call(members.admin, 'POST', '/api/console/plan', { plan: 'service' });
    expect(plan.statusCode).toBe(403);
    expect(plan.json()).toEqual(roleProblem('owner', 'admin'));
    const byOwner = await call(owner, 'POST', '/api/console/plan', { plan: 'service' });
    expect(byOwner.statusCode).toBe(200);
  });

  it("keeps a key's scopes whatever the role of the member who made it", async () => {
    const key = await call(members.admin, 'POST', '/api/console/keys', {
      label: 'r',
      scopes: ['scans:read'],
    });
    const secret = (
      await call(members.admin, 'GET', `/api/console${(key.json() as { revealUrl: string }).revealUrl}`)
    ).json() as { key: string };
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/keys',
      headers: { 'x-api-key': secret.key },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'insufficient_scope' });
  });

  it('applies a role change to a live session at its next request', async () => {
    const { default: pg } = await import('pg');
    const client = new pg.Client(t.databaseUrl);
    await client.connect();
    await client.query(`UPDATE memberships SET role = 'viewer' WHERE user_id = $1`, [members.admin.userId]);
    await client.end();
    const res = await call(members.admin, 'GET', '/api/console/keys');
    expect(res.json()).toEqual(roleProblem('admin', 'viewer'));
  });
});
