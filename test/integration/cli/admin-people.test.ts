import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../helpers/db.js';
import { logIn } from '../../helpers/members.js';
import { startTestApp, TEST_PEPPER, type TestApp } from '../../helpers/test-app.js';

/**
 * The operator's way to people and keys (docs/operations.md#people-and-keys-from-the-command-line):
 * `npm run admin -- create-workspace --owner-email`, `create-key` and `reset-password`, each its
 * own process on the database the app serves, ending with a person who signs in and makes keys.
 */
const ROOT = path.resolve(import.meta.dirname, '../../..');
const BASE = 'https://triage.example.com';

function admin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/admin.ts', ...args],
      {
        cwd: ROOT,
        timeout: 90_000,
        env: {
          PATH: process.env.PATH ?? '',
          LOG_LEVEL: 'warn',
          DATABASE_URL: db.url,
          KEY_PEPPER: TEST_PEPPER,
          PUBLIC_BASE_URL: BASE,
        },
      },
      (err, stdout, stderr) => {
        const code = err ? (err as { code?: unknown }).code : 0;
        resolve({ code: typeof code === 'number' ? code : -1, stdout, stderr });
      },
    );
  });
}

let db: { url: string; drop: () => Promise<void> };
let t: TestApp;
let workspaceId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  t = await startTestApp({ databaseUrl: db.url, env: { PUBLIC_BASE_URL: BASE } });
});
afterAll(async () => {
  await t?.close();
  await db?.drop();
});

describe('admin CLI: people and keys', { timeout: 180_000 }, () => {
  it('create-workspace --owner-email prints an invitation, and its owner signs in and makes a key', async () => {
    const run = await admin([
      'create-workspace',
      '--name',
      'From the CLI',
      '--plan',
      'free',
      '--owner-email',
      'root@example.com',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const m = /^workspace ([0-9a-f-]{36})\nplan free\napi_key svc_\w+\nowner_invitation (\S+)\n$/.exec(
      run.stdout,
    );
    expect(m, run.stdout).not.toBeNull();
    workspaceId = m![1]!;
    const url = m![2]!;
    expect(url).toMatch(new RegExp(`^${BASE}/invitations/[A-Za-z0-9_-]{40,}$`));
    const token = url.split('/').pop()!;
    const look = await t.app.inject({ method: 'GET', url: `/api/console/invitations/${token}` });
    expect(look.json()).toMatchObject({
      workspaceName: 'From the CLI',
      role: 'owner',
      invitedBy: 'The operator',
    });
    const accept = await t.app.inject({
      method: 'POST',
      url: `/api/console/invitations/${token}/accept`,
      payload: { password: 'the owner chose this' },
    });
    expect(accept.statusCode, accept.body).toBe(201);
    const session = await logIn(t.app, 'root@example.com', 'the owner chose this');
    expect(session.workspaceId).toBe(workspaceId);
    const key = await t.app.inject({
      method: 'POST',
      url: '/api/console/keys',
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrf },
      payload: { label: 'CI', scopes: ['scans:write', 'keys:write', 'workflows:write'] },
    });
    expect(key.statusCode, key.body).toBe(201);
  });

  it('create-key prints a key once, with the scopes asked for, audited as the operator', async () => {
    const run = await admin([
      'create-key',
      '--workspace',
      workspaceId,
      '--label',
      'rotation bot',
      '--scopes',
      'keys:write,usage:read',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const m = /^key_id ([0-9a-f-]{36})\napi_key (svc_\w+)\n$/.exec(run.stdout);
    expect(m, run.stdout).not.toBeNull();
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/keys', headers: { 'x-api-key': m![2]! } });
    expect(list.statusCode).toBe(200);
    const audit = await t.app.inject({
      method: 'GET',
      url: `/api/v1/audit-events?key=${m![1]}`,
      headers: { 'x-api-key': m![2]! },
    });
    const events = (audit.json() as { data: { action: string; actor: string }[] }).data;
    expect(events.map((e) => [e.action, e.actor])).toEqual(
      expect.arrayContaining([
        ['create', 'operator'],
        ['reveal', 'operator'],
      ]),
    );
  });

  it('create-key refuses an unknown scope, workspace or missing label', async () => {
    const bad = await admin(['create-key', '--workspace', workspaceId, '--label', 'x', '--scopes', 'root']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown scope: root');
    const none = await admin([
      'create-key',
      '--workspace',
      '00000000-0000-0000-0000-000000000000',
      '--label',
      'x',
      '--scopes',
      'scans:read',
    ]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('No workspace 00000000-0000-0000-0000-000000000000.');
  });

  it('reset-password prints a link that sets a new password once', async () => {
    const run = await admin(['reset-password', '--email', 'ROOT@example.com']);
    expect(run.code, run.stderr).toBe(0);
    const url = /^reset_url (\S+)\n$/.exec(run.stdout)?.[1];
    expect(url).toMatch(new RegExp(`^${BASE}/reset-password/[A-Za-z0-9_-]{40,}$`));
    const token = url!.split('/').pop()!;
    const set = () =>
      t.app.inject({
        method: 'POST',
        url: `/api/console/password-reset/${token}`,
        payload: { password: 'reset by the operator' },
      });
    expect((await set()).statusCode).toBe(204);
    expect((await set()).statusCode).toBe(410);
    await logIn(t.app, 'root@example.com', 'reset by the operator');
    const unknown = await admin(['reset-password', '--email', 'nobody@example.com']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No console user has the email nobody@example.com.');
  });
});
