import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpWorkflowManager } from '../../helpers/test-app.js';
import { startScanApp, uploadScan, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { problemDocument } from '../../helpers/problem.js';
import { hubSignature } from '../../../src/domain/workflows/signing.js';

/**
 * Inbound Jira and GitHub webhooks: a valid signature moves the linked case (with a history
 * entry naming the workflow) and nothing is echoed back to that workflow; a bad or missing
 * signature, a replay, a stale event, another workspace's secret or the wrong kind is 401 and
 * changes nothing.
 */
let t: ScanTestApp;
let a: Awaited<ReturnType<typeof signUpWorkflowManager>>;
let b: Awaited<ReturnType<typeof signUpWorkflowManager>>;
let caseIds: string[];
let gh: { id: string; secret: string };
let jira: { id: string; secret: string };
let otherGh: { id: string; secret: string };

const api = (key: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
  t.app.inject({
    method,
    url,
    headers: { 'x-api-key': key, ...(payload ? { 'content-type': 'application/json' } : {}) },
    ...(payload ? { payload: JSON.stringify(payload) } : {}),
  });

async function create(key: string, target: Record<string, unknown>, statusMap?: Record<string, string>) {
  const res = await api(key, 'POST', '/api/v1/workflows', {
    name: 'wf',
    target,
    ...(statusMap ? { statusMap } : {}),
  });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; secret: string };
}

const link = (workflowId: string, workspaceId: string, caseId: string, externalId: string) =>
  t.infra.pool.query(
    `INSERT INTO workflow_links (workflow_id, case_id, workspace_id, marker, external_id, url)
     VALUES ($1, $2, $3, $4, $5, 'https://example.test/x')`,
    [workflowId, caseId, workspaceId, `vt-${workflowId}-${externalId}`, externalId],
  );

let delivery = 0;
function githubHook(
  workflowId: string,
  secret: string,
  issue: Record<string, unknown>,
  action: string,
  over: Record<string, string> = {},
) {
  const body = JSON.stringify({
    action,
    issue: { updated_at: t.clock().toISOString(), ...issue },
    repository: { full_name: 'acme/vulns' },
  });
  return t.app.inject({
    method: 'POST',
    url: `/api/hooks/github/${workflowId}`,
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'issues',
      'x-github-delivery': `d-${++delivery}`,
      'x-hub-signature-256': hubSignature(secret, body),
      ...over,
    },
    payload: body,
  });
}

function jiraHook(
  workflowId: string,
  secret: string,
  key: string,
  status: string,
  category: string,
  timestamp = t.clock().getTime(),
) {
  const body = JSON.stringify({
    timestamp,
    webhookEvent: 'jira:issue_updated',
    issue: { key, fields: { status: { name: status, statusCategory: { key: category } } } },
  });
  return t.app.inject({
    method: 'POST',
    url: `/api/hooks/jira/${workflowId}`,
    headers: { 'content-type': 'application/json', 'x-hub-signature': hubSignature(secret, body) },
    payload: body,
  });
}

const caseOf = async (id: string) => (await api(a.key, 'GET', `/api/v1/cases/${id}`)).json();
const refused = problemDocument(
  401,
  'unauthenticated',
  'Not signed in',
  'The webhook is not signed by this workflow, or is a replay.',
);

beforeAll(async () => {
  t = await startScanApp({
    env: { WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' },
  });
  a = await signUpWorkflowManager(t.app, { plan: 'trial' });
  b = await signUpWorkflowManager(t.app, { plan: 'trial' });
  const up = await uploadScan(t.app, a.key, readFileSync('test/fixtures/scans/nessus/nessus_many_vuln.xml'));
  expect((await waitForScan(t.app, a.key, up.json().scanId)).status).toBe('completed');
  caseIds = ((await api(a.key, 'GET', '/api/v1/cases?limit=20')).json().data as { id: string }[]).map(
    (c) => c.id,
  );
  expect(caseIds.length).toBeGreaterThanOrEqual(4);
  gh = await create(a.key, { kind: 'github', owner: 'acme', repo: 'vulns', token: 'ghp_x' });
  jira = await create(
    a.key,
    {
      kind: 'jira',
      baseUrl: 'https://acme.atlassian.net',
      email: 'b@acme.test',
      apiToken: 't',
      projectKey: 'SEC',
    },
    { "Won't Fix": 'risk_accepted' },
  );
  otherGh = await create(b.key, { kind: 'github', owner: 'other', repo: 'vulns', token: 'ghp_y' });
  await link(gh.id, a.workspaceId, caseIds[0]!, '7');
  await link(gh.id, a.workspaceId, caseIds[1]!, '8');
  await link(jira.id, a.workspaceId, caseIds[2]!, 'SEC-3');
  await link(jira.id, a.workspaceId, caseIds[3]!, 'SEC-4');
});

afterAll(async () => {
  await t?.close();
});

describe('inbound GitHub webhooks', () => {
  it('closing the issue resolves the case, with history naming the workflow, and echoes nothing back', async () => {
    const res = await githubHook(
      gh.id,
      gh.secret,
      { number: 7, state: 'closed', state_reason: 'completed' },
      'closed',
    );
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({
      object: 'hook_receipt',
      applied: true,
      caseId: caseIds[0],
      status: 'resolved',
    });
    const c = await caseOf(caseIds[0]!);
    expect(c.status).toBe('resolved');
    expect(c.history.at(-1)).toMatchObject({
      from: 'open',
      to: 'resolved',
      actor: `workflow:${gh.id}`,
      note: 'GitHub issue #7 closed.',
    });
    expect(c.links).toEqual([
      expect.objectContaining({ workflowId: gh.id, externalId: '7', state: 'closed' }),
    ]);
    const deliveries = (await api(a.key, 'GET', `/api/v1/workflows/${gh.id}/deliveries`)).json().data;
    expect(deliveries).toEqual([]);
  });

  it('closed as not planned → risk_accepted; reopened → open', async () => {
    const closed = await githubHook(gh.id, gh.secret, { number: 8, state_reason: 'not_planned' }, 'closed');
    expect(closed.json()).toMatchObject({ applied: true, status: 'risk_accepted' });
    const reopened = await githubHook(gh.id, gh.secret, { number: 8, state_reason: 'reopened' }, 'reopened');
    expect(reopened.json()).toMatchObject({ applied: true, status: 'open' });
    expect((await caseOf(caseIds[1]!)).status).toBe('open');
  });

  it('refuses a bad, missing or foreign signature, a replayed delivery and a stale event; nothing changes', async () => {
    const before = await caseOf(caseIds[1]!);
    const attempts = [
      await githubHook(gh.id, gh.secret, { number: 8 }, 'closed', {
        'x-hub-signature-256': 'sha256=' + '0'.repeat(64),
      }),
      await githubHook(gh.id, gh.secret, { number: 8 }, 'closed', { 'x-hub-signature-256': '' }),
      await githubHook(gh.id, otherGh.secret, { number: 8 }, 'closed'),
      await githubHook(
        gh.id,
        gh.secret,
        { number: 8, updated_at: new Date(t.clock().getTime() - 6 * 60_000).toISOString() },
        'closed',
      ),
      await githubHook(gh.id, gh.secret, { number: 8 }, 'closed', { 'x-github-delivery': 'd-1' }),
      await githubHook('00000000-0000-0000-0000-000000000000', gh.secret, { number: 8 }, 'closed'),
      await githubHook('not-a-uuid', gh.secret, { number: 8 }, 'closed'),
      // A GitHub-signed event sent to the Jira workflow's address.
      await githubHook(jira.id, jira.secret, { number: 8 }, 'closed').then(() =>
        t.app.inject({
          method: 'POST',
          url: `/api/hooks/jira/${gh.id}`,
          headers: { 'content-type': 'application/json' },
          payload: '{}',
        }),
      ),
    ];
    for (const res of attempts) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(refused);
    }
    expect(await caseOf(caseIds[1]!)).toEqual(before);
  });

  it("another workspace's workflow, validly signed, cannot reach this workspace's case", async () => {
    const res = await githubHook(otherGh.id, otherGh.secret, { number: 7 }, 'reopened');
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({
      object: 'hook_receipt',
      applied: false,
      reason: 'no case is linked to this issue',
    });
    expect((await caseOf(caseIds[0]!)).status).toBe('resolved');
  });

  it('refuses a malformed body (400) and an oversized one (413)', async () => {
    const body = '{"action": "closed", "issue": ';
    const bad = await t.app.inject({
      method: 'POST',
      url: `/api/hooks/github/${gh.id}`,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'issues',
        'x-github-delivery': 'x1',
        'x-hub-signature-256': hubSignature(gh.secret, body),
      },
      payload: body,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_request');
    const big = await t.app.inject({
      method: 'POST',
      url: `/api/hooks/github/${gh.id}`,
      headers: { 'content-type': 'application/json' },
      payload: 'x'.repeat(1024 * 1024 + 10),
    });
    expect(big.statusCode).toBe(413);
  });
});

describe('inbound Jira webhooks', () => {
  it('Done resolves the case; a status map entry maps "Won\'t Fix"; moving between open statuses changes nothing', async () => {
    const done = await jiraHook(jira.id, jira.secret, 'SEC-3', 'Done', 'done');
    expect(done.statusCode).toBe(202);
    expect(done.json()).toMatchObject({ applied: true, status: 'resolved' });
    const c = await caseOf(caseIds[2]!);
    expect(c.history.at(-1)).toMatchObject({
      to: 'resolved',
      actor: `workflow:${jira.id}`,
      note: 'Jira issue SEC-3 moved to Done.',
    });
    const wontFix = await jiraHook(jira.id, jira.secret, 'SEC-4', "Won't Fix", 'done');
    expect(wontFix.json()).toMatchObject({ applied: true, status: 'risk_accepted' });
    const inProgress = await jiraHook(jira.id, jira.secret, 'SEC-4', 'In Progress', 'indeterminate');
    expect(inProgress.json()).toMatchObject({ applied: true, status: 'open' });
    const again = await jiraHook(jira.id, jira.secret, 'SEC-4', 'To Do', 'new');
    expect(again.json()).toEqual({
      object: 'hook_receipt',
      applied: false,
      reason: 'the issue is still open',
    });
  });

  it('refuses a stale timestamp, a replay and a bad signature', async () => {
    const before = await caseOf(caseIds[2]!);
    const stale = await jiraHook(
      jira.id,
      jira.secret,
      'SEC-3',
      'To Do',
      'new',
      t.clock().getTime() - 6 * 60_000,
    );
    expect(stale.statusCode).toBe(401);
    const ts = t.clock().getTime() + 1;
    expect((await jiraHook(jira.id, jira.secret, 'SEC-3', 'Done', 'done', ts)).statusCode).toBe(202);
    const replay = await jiraHook(jira.id, jira.secret, 'SEC-3', 'Done', 'done', ts);
    expect(replay.statusCode).toBe(401);
    const forged = await jiraHook(jira.id, gh.secret, 'SEC-3', 'To Do', 'new');
    expect(forged.statusCode).toBe(401);
    expect(forged.json()).toEqual(refused);
    expect((await caseOf(caseIds[2]!)).status).toBe(before.status);
  });

  it('no secret in any log line', () => {
    const all = t.logs.join('\n');
    for (const s of [gh.secret, jira.secret, otherGh.secret]) expect(all).not.toContain(s);
  });
});
