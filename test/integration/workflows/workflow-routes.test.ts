import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUpWorkflowManager, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { problemDocument } from '../../helpers/problem.js';

/** `/api/v1/workflows`: happy paths, bad input, other workspaces, scopes, and secrets never shown. */
let t: TestApp;
let owner: Awaited<ReturnType<typeof signUpWorkflowManager>>;
let other: Awaited<ReturnType<typeof signUpWorkflowManager>>;
let readOnly: { id: string; key: string };
let receiver: Server;
let receiverUrl: string;
const received: { headers: Record<string, string>; body: string }[] = [];
const JIRA_TOKEN = 'ATATT3xFfGF0-jira-api-token-0123456789';
const GH_TOKEN = 'github_pat_11ABCDEFG0123456789_secretsecret';

const inject = (key: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  t.app.inject({
    method,
    url,
    headers: { 'x-api-key': key, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(payload !== undefined
      ? { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }
      : {}),
  });

const jira = (over: Record<string, unknown> = {}) => ({
  name: 'prod criticals to Jira',
  target: {
    kind: 'jira',
    baseUrl: 'https://acme.atlassian.net',
    email: 'bot@acme.test',
    apiToken: JIRA_TOKEN,
    projectKey: 'SEC',
    issueType: 'Bug',
  },
  rule: { priority: ['CRITICAL', 'HIGH'], status: ['open'], kev: true, environment: ['PRODUCTION'] },
  fields: {
    summary: '{{case.title}} on {{case.asset}}',
    priority: { CRITICAL: 'Highest', HIGH: 'High' },
    labels: ['vuln-triage', '{{case.scanner}}'],
  },
  ...over,
});

beforeAll(async () => {
  t = await startTestApp({
    env: { WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' },
  });
  owner = await signUpWorkflowManager(t.app, { plan: 'trial' });
  other = await signUpWorkflowManager(t.app, { plan: 'trial' });
  readOnly = await createKey(t.app, owner, ['scans:read'], 'reader');
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        headers: req.headers as Record<string, string>,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  await new Promise((r) => receiver.close(r));
  await t?.close();
});

describe('workflows: happy paths', () => {
  it('creates a Jira workflow: 201 with its secret once; reads never show the token or the secret', async () => {
    const res = await inject(owner.key, 'POST', '/api/v1/workflows', jira());
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      object: 'workflow',
      name: 'prod criticals to Jira',
      kind: 'jira',
      enabled: true,
      target: {
        kind: 'jira',
        baseUrl: 'https://acme.atlassian.net',
        email: 'bot@acme.test',
        projectKey: 'SEC',
        issueType: 'Bug',
        transitions: { done: 'Done', reopen: 'To Do' },
        credential: '…6789',
      },
      rule: { priority: ['CRITICAL', 'HIGH'], status: ['open'], kev: true, environment: ['PRODUCTION'] },
      inboundUrl: expect.stringMatching(new RegExp(`/api/hooks/jira/${body.id}$`)),
      lastDeliveryStatus: null,
    });
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(res.body).not.toContain(JIRA_TOKEN);

    for (const r of [
      await inject(owner.key, 'GET', `/api/v1/workflows/${body.id}`),
      await inject(readOnly.key, 'GET', '/api/v1/workflows'),
    ]) {
      expect(r.statusCode).toBe(200);
      expect(r.body).not.toContain(JIRA_TOKEN);
      expect(r.body).not.toContain(body.secret);
      expect(r.body).not.toContain('"secret"');
    }
    const all = t.logs.join('\n');
    expect(all).not.toContain(JIRA_TOKEN);
    expect(all).not.toContain(body.secret);
  });

  it('creates a GitHub workflow and a webhook; an empty rule is kept as {}', async () => {
    const gh = await inject(owner.key, 'POST', '/api/v1/workflows', {
      name: 'to GitHub',
      target: { kind: 'github', owner: 'acme', repo: 'vulns', token: GH_TOKEN },
      fields: { summary: '[{{case.priority}}] {{case.title}}', priority: { CRITICAL: 'P0' } },
    });
    expect(gh.statusCode).toBe(201);
    expect(gh.json()).toMatchObject({
      kind: 'github',
      rule: {},
      target: { apiUrl: 'https://api.github.com', credential: '…cret' },
    });
    expect(gh.body).not.toContain(GH_TOKEN);
    const hook = await inject(owner.key, 'POST', '/api/v1/workflows', {
      name: 'hook',
      target: { kind: 'webhook', url: receiverUrl },
    });
    expect(hook.statusCode).toBe(201);
    expect(hook.json()).toMatchObject({
      kind: 'webhook',
      inboundUrl: null,
      target: { kind: 'webhook', url: receiverUrl },
    });
  });

  it('sends a signed test delivery to a webhook and lists it among the deliveries', async () => {
    const created = (
      await inject(owner.key, 'POST', '/api/v1/workflows', {
        name: 'signed',
        target: { kind: 'webhook', url: receiverUrl },
      })
    ).json();
    const res = await inject(owner.key, 'POST', `/api/v1/workflows/${created.id}/test`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      object: 'workflow_test',
      delivered: true,
      responseCode: 200,
      error: null,
    });
    const got = received.at(-1)!;
    const verified = new Webhook(created.secret).verify(got.body, got.headers) as {
      type: string;
      workflowId: string;
    };
    expect(verified).toMatchObject({ type: 'workflow.test', workflowId: created.id });
    expect(got.headers['webhook-id']).toBe(res.json().deliveryId);
    // A forged signature does not verify.
    expect(() =>
      new Webhook(`whsec_${Buffer.from('x'.repeat(32)).toString('base64')}`).verify(got.body, got.headers),
    ).toThrow();

    const list = await inject(readOnly.key, 'GET', `/api/v1/workflows/${created.id}/deliveries`);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject({
      object: 'list',
      data: [
        {
          object: 'delivery',
          event: 'workflow.test',
          status: 'delivered',
          attempts: 1,
          responseCode: 200,
          caseId: null,
        },
      ],
      nextCursor: null,
    });
  });

  it('updates (rule, disable, new credential) and deletes', async () => {
    const created = (await inject(owner.key, 'POST', '/api/v1/workflows', jira())).json();
    const res = await inject(owner.key, 'PATCH', `/api/v1/workflows/${created.id}`, {
      enabled: false,
      rule: { severity: ['CRITICAL'] },
      credential: 'new-token-abcd',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      enabled: false,
      rule: { severity: ['CRITICAL'] },
      target: { credential: '…abcd' },
    });
    expect(res.body).not.toContain('new-token-abcd');
    expect((await inject(owner.key, 'DELETE', `/api/v1/workflows/${created.id}`)).statusCode).toBe(204);
    expect((await inject(owner.key, 'GET', `/api/v1/workflows/${created.id}`)).statusCode).toBe(404);
  });
});

describe('workflows: bad input', () => {
  it('lists every missing field', async () => {
    const res = await inject(owner.key, 'POST', '/api/v1/workflows', {});
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      ...problemDocument(
        400,
        'invalid_request',
        'Invalid request',
        'The request has invalid fields; see errors.',
      ),
      errors: expect.arrayContaining([
        expect.objectContaining({ path: '/name' }),
        expect.objectContaining({ path: '/target' }),
      ]),
    });
  });

  it('refuses a target missing its own fields, a bad kind, a bad project key', async () => {
    const missing = await inject(owner.key, 'POST', '/api/v1/workflows', {
      name: 'x',
      target: { kind: 'jira' },
    });
    expect(missing.statusCode).toBe(400);
    const paths = (missing.json().errors as { path: string }[]).map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining(['/target/baseUrl', '/target/apiToken', '/target/projectKey']),
    );
    expect(
      (await inject(owner.key, 'POST', '/api/v1/workflows', { name: 'x', target: { kind: 'email' } }))
        .statusCode,
    ).toBe(400);
    const key = await inject(
      owner.key,
      'POST',
      '/api/v1/workflows',
      jira({ target: { ...jira().target, projectKey: 'sec; drop' } }),
    );
    expect(key.statusCode).toBe(400);
  });

  it('refuses malformed JSON, wrong types, and an oversized body', async () => {
    const bad = await inject(owner.key, 'POST', '/api/v1/workflows', '{"name": ');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_request');
    expect(
      (await inject(owner.key, 'POST', '/api/v1/workflows', { name: 5, target: 'jira' })).statusCode,
    ).toBe(400);
    const big = await inject(owner.key, 'POST', '/api/v1/workflows', jira({ name: 'x'.repeat(40_000) }));
    expect(big.statusCode).toBe(413);
    expect(big.json().code).toBe('payload_too_large');
  });

  it('refuses hostile input: code in a template, an unknown placeholder, NUL, a non-https or credentialed URL', async () => {
    const code = await inject(
      owner.key,
      'POST',
      '/api/v1/workflows',
      jira({ fields: { summary: '{{process.env.KEY_PEPPER}}' } }),
    );
    expect(code.statusCode).toBe(400);
    expect(code.json().errors[0]).toMatchObject({
      path: '/fields/summary',
      message: expect.stringContaining('unknown placeholder'),
    });
    const label = await inject(
      owner.key,
      'POST',
      '/api/v1/workflows',
      jira({ fields: { labels: ['{{ constructor.constructor }}'] } }),
    );
    expect(label.statusCode).toBe(400);
    expect(
      (await inject(owner.key, 'POST', '/api/v1/workflows', jira({ name: 'a\u0000b' }))).statusCode,
    ).toBe(400);
    for (const url of [
      'ftp://hooks.acme.test/x',
      'https://user:pw@hooks.acme.test/x',
      'javascript:alert(1)',
    ]) {
      const res = await inject(owner.key, 'POST', '/api/v1/workflows', {
        name: 'h',
        target: { kind: 'webhook', url },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors[0].path).toBe('/target/url');
    }
    const proto = await inject(
      owner.key,
      'POST',
      '/api/v1/workflows',
      '{"name":"p","target":{"kind":"webhook","url":"https://a.test"},"__proto__":{"admin":true}}',
    );
    expect(proto.statusCode).toBe(400);
  });

  it("refuses a summary whose fixed text exceeds the target's limit", async () => {
    const res = await inject(
      owner.key,
      'POST',
      '/api/v1/workflows',
      jira({ fields: { summary: `${'S'.repeat(256)}{{case.title}}` } }),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([
      {
        path: '/fields/summary',
        message: "the summary's fixed text is longer than the target allows (255 characters)",
      },
    ]);
  });

  it('refuses an empty PATCH, a credential for a webhook, a tampered cursor', async () => {
    const created = (
      await inject(owner.key, 'POST', '/api/v1/workflows', {
        name: 'h',
        target: { kind: 'webhook', url: receiverUrl },
      })
    ).json();
    expect((await inject(owner.key, 'PATCH', `/api/v1/workflows/${created.id}`, {})).statusCode).toBe(400);
    expect(
      (await inject(owner.key, 'PATCH', `/api/v1/workflows/${created.id}`, { credential: 'x' })).statusCode,
    ).toBe(400);
    const cur = await inject(owner.key, 'GET', `/api/v1/workflows/${created.id}/deliveries?cursor=nope`);
    expect(cur.statusCode).toBe(400);
  });
});

describe('workflows: security', () => {
  it("answers 404 for another workspace's workflow on every route, and changes nothing", async () => {
    const mine = (await inject(owner.key, 'POST', '/api/v1/workflows', jira())).json();
    const notFound = problemDocument(404, 'not_found', 'Not found', 'No such workflow.');
    for (const [method, url, body] of [
      ['GET', `/api/v1/workflows/${mine.id}`],
      ['PATCH', `/api/v1/workflows/${mine.id}`, { enabled: false }],
      ['DELETE', `/api/v1/workflows/${mine.id}`],
      ['POST', `/api/v1/workflows/${mine.id}/test`],
      ['GET', `/api/v1/workflows/${mine.id}/deliveries`],
      ['GET', '/api/v1/workflows/not-a-uuid'],
    ] as const) {
      const res = await inject(other.key, method, url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json()).toEqual(notFound);
    }
    expect((await inject(other.key, 'GET', '/api/v1/workflows')).json().data).toEqual([]);
    expect((await inject(owner.key, 'GET', `/api/v1/workflows/${mine.id}`)).json().enabled).toBe(true);
  });

  it('a key without workflows:write may read but not manage (403)', async () => {
    const res = await inject(readOnly.key, 'POST', '/api/v1/workflows', jira());
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(
      problemDocument(
        403,
        'insufficient_scope',
        'Insufficient scope',
        'This route needs a key with the workflows:write scope.',
      ),
    );
    expect((await inject(readOnly.key, 'GET', '/api/v1/workflows')).statusCode).toBe(200);
  });

  it('no API key: 401', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/workflows' });
    expect(res.statusCode).toBe(401);
  });

  it('no credential or secret in any log line', () => {
    const all = t.logs.join('\n');
    expect(all).not.toContain(JIRA_TOKEN);
    expect(all).not.toContain(GH_TOKEN);
    expect(all).not.toMatch(/whsec_[A-Za-z0-9+/]{20,}/);
  });
});

describe('workflows: console JSON API (Settings > Workflows)', () => {
  const consoleCall = (
    s: { cookie: string; csrf: string },
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    payload?: unknown,
    csrf = true,
  ) =>
    t.app.inject({
      method,
      url,
      headers: {
        cookie: s.cookie,
        ...(csrf ? { 'x-csrf-token': s.csrf } : {}),
        ...(payload ? { 'content-type': 'application/json' } : {}),
      },
      ...(payload ? { payload: JSON.stringify(payload) } : {}),
    });

  it('creates, lists, tests, disables and deletes with the session; the secret once, never the token', async () => {
    const created = await consoleCall(owner, 'POST', '/api/console/workflows', {
      name: 'console hook',
      target: { kind: 'webhook', url: receiverUrl },
    });
    expect(created.statusCode).toBe(201);
    const wf = created.json();
    expect(wf.secret).toMatch(/^whsec_/);
    const list = await consoleCall(owner, 'GET', '/api/console/workflows');
    expect(list.json().data.map((w: { id: string }) => w.id)).toContain(wf.id);
    expect(list.body).not.toContain(wf.secret);
    const test = await consoleCall(owner, 'POST', `/api/console/workflows/${wf.id}/test`);
    expect(test.json()).toMatchObject({ delivered: true, responseCode: 200 });
    const deliveries = await consoleCall(owner, 'GET', `/api/console/workflows/${wf.id}/deliveries`);
    expect(deliveries.json().data).toHaveLength(1);
    expect(
      (await consoleCall(owner, 'PATCH', `/api/console/workflows/${wf.id}`, { enabled: false })).json()
        .enabled,
    ).toBe(false);
    expect((await consoleCall(owner, 'DELETE', `/api/console/workflows/${wf.id}`)).statusCode).toBe(204);
  });

  it("refuses a change without the CSRF token, another workspace's workflow (404), and no session (401)", async () => {
    const noCsrf = await consoleCall(
      owner,
      'POST',
      '/api/console/workflows',
      { name: 'x', target: { kind: 'webhook', url: receiverUrl } },
      false,
    );
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.json().code).toBe('csrf_failed');
    const mine = (await inject(owner.key, 'POST', '/api/v1/workflows', jira())).json();
    const theirs = await consoleCall(other, 'GET', `/api/console/workflows/${mine.id}`);
    expect(theirs.statusCode).toBe(404);
    expect(
      (await consoleCall(other, 'PATCH', `/api/console/workflows/${mine.id}`, { enabled: false })).statusCode,
    ).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/api/console/workflows' })).statusCode).toBe(401);
  });
});
