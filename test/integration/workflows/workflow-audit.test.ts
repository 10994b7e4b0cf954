import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUpWorkflowManager, startTestApp, type TestApp } from '../../helpers/test-app.js';

/** Workflow changes in the audit log (docs/workflows.md#audit-log): who, which workflow, what changed; no secret. */
let t: TestApp;
let owner: Awaited<ReturnType<typeof signUpWorkflowManager>>;
let other: Awaited<ReturnType<typeof signUpWorkflowManager>>;
/** Keys that may read the audit log (`keys:write`), one per workspace. */
const auditor = new Map<string, string>();
const JIRA_TOKEN = 'ATATT3xFfGF0-audit-jira-token-0123456789';
const NEW_TOKEN = 'ATATT3xFfGF0-audit-rotated-token-987654321';

const inject = (key: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  t.app.inject({
    method,
    url,
    headers: { 'x-api-key': key, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(payload !== undefined ? { payload: JSON.stringify(payload) } : {}),
  });

const workflowEvents = async (who: { key: string }) => {
  const res = await inject(auditor.get(who.key)!, 'GET', '/api/v1/audit-events?limit=100');
  expect(res.statusCode).toBe(200);
  return {
    raw: res.body,
    events: (res.json().data as { action: string; actor: string; keyId: string | null; details: object }[])
      .filter((e) => e.action.startsWith('workflow_'))
      .reverse(),
  };
};

beforeAll(async () => {
  t = await startTestApp({
    env: { WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' },
  });
  owner = await signUpWorkflowManager(t.app, { plan: 'trial' });
  other = await signUpWorkflowManager(t.app, { plan: 'trial' });
  for (const s of [owner, other])
    auditor.set(s.key, (await createKey(t.app, s, ['keys:write'], 'auditor')).key);
});

afterAll(async () => {
  await t?.close();
});

describe('workflow changes in the audit log', () => {
  it('records create, update, disable, enable and delete with the acting key, id and name, never a secret', async () => {
    const created = await inject(owner.key, 'POST', '/api/v1/workflows', {
      name: 'prod criticals to Jira',
      target: {
        kind: 'jira',
        baseUrl: 'https://acme.atlassian.net',
        email: 'bot@acme.test',
        apiToken: JIRA_TOKEN,
        projectKey: 'SEC',
      },
      rule: { priority: ['CRITICAL'] },
    });
    expect(created.statusCode).toBe(201);
    const { id, secret } = created.json() as { id: string; secret: string };
    const hook = await inject(owner.key, 'POST', '/api/v1/workflows', {
      name: 'hook',
      target: { kind: 'webhook', url: 'https://hooks.acme.test/vulns' },
    });
    expect(hook.statusCode).toBe(201);
    const hookSecret = (hook.json() as { secret: string }).secret;

    const patch = (body: unknown) => inject(owner.key, 'PATCH', `/api/v1/workflows/${id}`, body);
    expect((await patch({ name: 'renamed', rule: {}, credential: NEW_TOKEN })).statusCode).toBe(200);
    expect((await patch({ enabled: false })).statusCode).toBe(200);
    expect((await patch({ enabled: true })).statusCode).toBe(200);
    expect((await inject(owner.key, 'DELETE', `/api/v1/workflows/${id}`)).statusCode).toBe(204);

    const { raw, events } = await workflowEvents(owner);
    const actor = `key:${owner.keyId}`;
    const base = { actor, keyId: null };
    expect(events).toEqual([
      expect.objectContaining({
        ...base,
        action: 'workflow_create',
        details: { workflowId: id, name: 'prod criticals to Jira', kind: 'jira' },
      }),
      expect.objectContaining({
        ...base,
        action: 'workflow_create',
        details: expect.objectContaining({ name: 'hook', kind: 'webhook' }),
      }),
      expect.objectContaining({
        ...base,
        action: 'workflow_update',
        details: { workflowId: id, name: 'renamed', kind: 'jira', changed: ['name', 'rule', 'credential'] },
      }),
      expect.objectContaining({
        ...base,
        action: 'workflow_disable',
        details: { workflowId: id, name: 'renamed', kind: 'jira' },
      }),
      expect.objectContaining({
        ...base,
        action: 'workflow_enable',
        details: { workflowId: id, name: 'renamed', kind: 'jira' },
      }),
      expect.objectContaining({
        ...base,
        action: 'workflow_delete',
        details: { workflowId: id, name: 'renamed', kind: 'jira' },
      }),
    ]);
    for (const s of [JIRA_TOKEN, NEW_TOKEN, secret, hookSecret, 'whsec_', 'ATATT3x'])
      expect(raw).not.toContain(s);

    const filtered = await inject(
      auditor.get(owner.key)!,
      'GET',
      '/api/v1/audit-events?action=workflow_disable',
    );
    expect(filtered.json().data).toHaveLength(1);
  });

  it('records nothing for a refused change or another workspace’s workflow', async () => {
    const before = (await workflowEvents(owner)).events.length;
    const mine = await inject(owner.key, 'POST', '/api/v1/workflows', {
      name: 'mine',
      target: { kind: 'webhook', url: 'https://hooks.acme.test/vulns' },
    });
    const id = (mine.json() as { id: string }).id;
    expect((await inject(other.key, 'PATCH', `/api/v1/workflows/${id}`, { enabled: false })).statusCode).toBe(
      404,
    );
    expect((await inject(other.key, 'DELETE', `/api/v1/workflows/${id}`)).statusCode).toBe(404);
    const bad = await inject(owner.key, 'POST', '/api/v1/workflows', {
      name: 'bad',
      target: { kind: 'webhook', url: 'http://10.0.0.1/hook' },
      fields: { summary: '{{case.nope}}' },
    });
    expect(bad.statusCode).toBe(400);
    expect((await workflowEvents(owner)).events.length).toBe(before + 1);
    expect((await workflowEvents(other)).events).toEqual([]);
  });

  it('records the signed-in user as the actor of a console change', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/console/workflows',
      headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf, 'content-type': 'application/json' },
      payload: JSON.stringify({
        name: 'from console',
        target: { kind: 'webhook', url: 'https://hooks.acme.test/v' },
      }),
    });
    expect(res.statusCode).toBe(201);
    const last = (await workflowEvents(owner)).events.at(-1);
    expect(last).toMatchObject({
      action: 'workflow_create',
      actor: expect.stringMatching(/^user:[0-9a-f-]{36}$/),
      details: { name: 'from console' },
    });
  });
});
