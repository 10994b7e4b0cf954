import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { multipartBody, startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { responseChecker, type OpenApiDocument } from '../../helpers/openapi.js';

/**
 * Real answers of representative routes, happy and refused, validate against the response
 * schemas the document gives for their status and media type (docs/api.md#reference). Since response schemas
 * only document (the app serialises with JSON.stringify), this also proves they drop nothing:
 * the fields asserted below are read from the bodies as sent.
 */
let t: ScanTestApp;
let checker: ReturnType<typeof responseChecker>;
let cookie: string;
let csrf: string;
let key: string;
let keyId: string;

const nessus = readFileSync(path.resolve('test/fixtures/scans/nessus/nessus_v_unknown.xml'));
const ALL_SCOPES = [
  'triage:write',
  'scans:write',
  'scans:read',
  'cases:write',
  'usage:read',
  'keys:write',
  'workflows:write',
];

/** One request: the answer is checked against the document under the route's template. */
async function call(
  method: string,
  template: string,
  opts: { url?: string; key?: string | null; session?: boolean } & Omit<InjectOptions, 'method' | 'url'> = {},
) {
  const headers: Record<string, string> = { ...(opts.headers as Record<string, string>) };
  const k = opts.key === undefined ? key : opts.key;
  if (k && template.startsWith('/api/') && !template.startsWith('/api/console')) headers['x-api-key'] = k;
  if (opts.session) Object.assign(headers, { cookie, 'x-csrf-token': csrf });
  const res = await t.app.inject({
    ...opts,
    method: method as InjectOptions['method'],
    url: opts.url ?? template,
    headers,
  });
  checker.check(method, template, res);
  return res;
}

beforeAll(async () => {
  t = await startScanApp();
  checker = responseChecker(
    (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<OpenApiDocument>(),
  );
  const signup = await call('POST', '/api/console/signup', {
    payload: {
      email: 'openapi@example.com',
      password: 'correct horse battery staple',
      workspaceName: 'Docs',
      plan: 'trial',
    },
  });
  expect(signup.statusCode).toBe(201);
  cookie = String(signup.headers['set-cookie']).split(';')[0]!;
  csrf = signup.json<{ csrfToken: string }>().csrfToken;
  const created = await call('POST', '/api/console/keys', {
    session: true,
    payload: { label: 'all', scopes: ALL_SCOPES },
  });
  expect(created.statusCode).toBe(201);
  const revealUrl = created.json<{ revealUrl: string }>().revealUrl;
  keyId = created.json<{ id: string }>().id;
  const reveal = await call('GET', '/api/console/reveal/:token', {
    url: `/api/console${revealUrl}`,
    session: true,
  });
  key = reveal.json<{ key: string }>().key;
  const again = await call('GET', '/api/console/reveal/:token', {
    url: `/api/console${revealUrl}`,
    session: true,
  });
  expect(again.statusCode).toBe(410);
});
afterAll(async () => {
  await t?.close();
});

describe('answers match their documented response schemas', () => {
  it('operational endpoints', async () => {
    expect((await call('GET', '/healthz')).statusCode).toBe(200);
    expect((await call('GET', '/readyz')).statusCode).toBe(200);
    expect((await call('GET', '/metrics')).statusCode).toBe(200);
  });

  it('keys, usage, models and the audit log', async () => {
    expect((await call('GET', '/api/v1/models')).json()).toMatchObject({ object: 'list' });
    const me = await call('GET', '/api/v1/keys/me');
    expect(me.json()).toMatchObject({ scopes: ALL_SCOPES, workspace: { plan: 'trial' } });
    expect((await call('GET', '/api/v1/usage')).statusCode).toBe(200);
    const list = await call('GET', '/api/v1/keys');
    expect(list.json<{ data: { usage: unknown }[] }>().data[0]!.usage).toBeDefined();
    const made = await call('POST', '/api/v1/keys', {
      payload: { label: 'ci', scopes: ['scans:write'], expiresIn: 90 },
    });
    expect(made.statusCode).toBe(201);
    const id = made.json<{ id: string; key: string }>().id;
    expect(made.json<{ key: string }>().key).toMatch(/^svc_/);
    const rotated = await call('POST', '/api/v1/keys/:id/rotate', {
      url: `/api/v1/keys/${id}/rotate`,
      payload: { graceHours: 1 },
    });
    expect(rotated.json()).toMatchObject({
      rotated: { status: 'rotating' },
      successor: { key: expect.any(String) },
    });
    const again = await call('POST', '/api/v1/keys/:id/rotate', {
      url: `/api/v1/keys/${id}/rotate`,
      payload: {},
    });
    expect(again.statusCode).toBe(409);
    const revoked = await call('POST', '/api/v1/keys/:id/revoke', { url: `/api/v1/keys/${id}/revoke` });
    expect(revoked.json()).toMatchObject({ status: 'revoked' });
    const audit = await call('GET', '/api/v1/audit-events', { url: '/api/v1/audit-events?limit=5' });
    expect(audit.json<{ data: unknown[] }>().data).toHaveLength(5);
  });

  it('the console JSON API', async () => {
    expect((await call('GET', '/api/console/session', { session: true })).statusCode).toBe(200);
    expect((await call('GET', '/api/console/workspace', { session: true })).json()).toMatchObject({
      plan: 'trial',
    });
    expect((await call('GET', '/api/console/statement', { session: true })).statusCode).toBe(200);
    expect((await call('GET', '/api/console/audit-events', { session: true })).statusCode).toBe(200);
    expect((await call('GET', '/api/console/keys', { session: true })).statusCode).toBe(200);
    expect(
      (await call('POST', '/api/console/plan', { session: true, payload: { plan: 'service' } })).statusCode,
    ).toBe(200);
    expect((await call('GET', '/api/console/session')).statusCode).toBe(401);
    const login = await call('POST', '/api/console/login', {
      payload: { email: 'openapi@example.com', password: 'correct horse battery staple' },
    });
    expect(login.statusCode).toBe(200);
    const wrong = await call('POST', '/api/console/login', {
      payload: { email: 'openapi@example.com', password: 'nope' },
    });
    expect(wrong.statusCode).toBe(401);
    const other = String(login.headers['set-cookie']).split(';')[0]!;
    const out = await call('POST', '/api/console/logout', {
      headers: { cookie: other, 'x-csrf-token': login.json<{ csrfToken: string }>().csrfToken },
    });
    expect(out.statusCode).toBe(204);
  });

  it('triage and batch triage', async () => {
    const one = await call('POST', '/api/v1/triage', {
      payload: { cveIds: ['CVE-2021-44228'], title: 'Log4Shell in billing-api', severity: 'CRITICAL' },
    });
    expect(one.statusCode).toBe(200);
    expect(Object.keys(one.json()).sort()).toEqual([
      'confidenceScore',
      'model',
      'priority',
      'reasoning',
      'recommendedAction',
      'severityOverride',
      'triagedAt',
      'usage',
    ]);
    const bad = await call('POST', '/api/v1/triage', {
      payload: { title: 'x', severity: 'BAD', model: 'gpt' },
    });
    expect(bad.statusCode).toBe(400);
    const batch = await call('POST', '/api/v1/triage/batch', {
      payload: { items: [{ cveIds: ['CVE-2021-44228'], title: 'Log4Shell', severity: 'CRITICAL' }] },
    });
    expect(batch.statusCode).toBe(202);
    const id = batch.json<{ batchId: string }>().batchId;
    const status = await call('GET', '/api/v1/triage/batch/:id', { url: `/api/v1/triage/batch/${id}` });
    expect(status.json()).toMatchObject({ batchId: id, total: 1 });
  });

  it('scans, findings, cases and evidence', async () => {
    const up = await call('POST', '/api/pipeline/scan', {
      url: '/api/pipeline/scan?name=nightly',
      headers: { 'content-type': 'application/xml' },
      payload: nessus,
    });
    expect(up.statusCode).toBe(202);
    const scanId = up.json<{ scanId: string }>().scanId;
    await waitForScan(t.app, key, scanId);
    const scan = await call('GET', '/api/pipeline/scan/:id', { url: `/api/pipeline/scan/${scanId}` });
    expect(scan.json()).toMatchObject({ status: 'completed', name: 'nightly' });
    await call('GET', '/api/v1/scans/:id', { url: `/api/v1/scans/${scanId}` });
    expect((await call('GET', '/api/v1/scans')).json<{ data: unknown[] }>().data).toHaveLength(1);
    const findings = await call('GET', '/api/v1/findings', { url: '/api/v1/findings?limit=5' });
    const finding = findings.json<{ data: { id: string; caseId: string }[] }>().data[0]!;
    await call('GET', '/api/v1/findings/:id', { url: `/api/v1/findings/${finding.id}` });
    await call('GET', '/api/v1/cases', {
      url: '/api/v1/cases?limit=5&severity=CRITICAL,HIGH,MEDIUM,LOW,INFO',
    });
    const detail = await call('GET', '/api/v1/cases/:id', { url: `/api/v1/cases/${finding.caseId}` });
    expect(detail.json<{ evidence: unknown[] }>().evidence.length).toBeGreaterThan(0);
    await call('GET', '/api/v1/cases/:id/evidence', { url: `/api/v1/cases/${finding.caseId}/evidence` });
    const patched = await call('PATCH', '/api/v1/cases/:id', {
      url: `/api/v1/cases/${finding.caseId}`,
      payload: {
        status: 'risk_accepted',
        note: 'compensating control',
        expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
      },
    });
    expect(patched.json<{ history: unknown[] }>().history).toHaveLength(1);
    const missing = await call('GET', '/api/v1/cases/:id', {
      url: '/api/v1/cases/00000000-0000-0000-0000-000000000000',
    });
    expect(missing.statusCode).toBe(404);
    const refused = await call('POST', '/api/pipeline/scan', {
      headers: { 'content-type': 'text/html' },
      payload: '<p>',
    });
    expect(refused.statusCode).toBe(415);
  });

  it('case triage and the console data routes', async () => {
    const cases = await call('GET', '/api/console/cases', { session: true });
    const caseId = cases.json<{ data: { id: string }[] }>().data[0]!.id;
    const one = await call('POST', '/api/v1/cases/:id/triage', { url: `/api/v1/cases/${caseId}/triage` });
    expect(one.json()).toMatchObject({ priority: expect.any(String), model: expect.any(String) });
    const many = await call('POST', '/api/v1/cases/triage', { payload: { caseIds: [caseId] } });
    expect(many.statusCode).toBe(202);
    expect(many.json()).toMatchObject({ status: 'queued', requested: 1, total: 1 });

    const preview = await call('POST', '/api/console/cases/triage/preview', {
      session: true,
      payload: { caseIds: [caseId] },
    });
    expect(preview.json()).toMatchObject({ cases: 1, aiCalls: 1 });
    const fromConsole = await call('POST', '/api/console/cases/:id/triage', {
      url: `/api/console/cases/${caseId}/triage`,
      session: true,
      payload: { key: keyId },
    });
    expect(fromConsole.statusCode).toBe(200);
    const consoleBatch = await call('POST', '/api/console/cases/triage', {
      session: true,
      payload: { key: keyId, caseIds: [caseId] },
    });
    expect(consoleBatch.statusCode).toBe(202);
    await call('GET', '/api/console/cases/counts', { session: true });
    await call('GET', '/api/console/cases/:id', { url: `/api/console/cases/${caseId}`, session: true });
    await call('GET', '/api/console/cases/:id/evidence', {
      url: `/api/console/cases/${caseId}/evidence`,
      session: true,
    });
    const bulk = await call('POST', '/api/console/cases/status', {
      session: true,
      payload: { status: 'in_progress', caseIds: [caseId] },
    });
    expect(bulk.json()).toEqual({ changed: 1, unchanged: 0, notFound: 0 });
    await call('GET', '/api/console/dashboard', { session: true });
    const scans = await call('GET', '/api/console/scans', { session: true });
    const scanId = scans.json<{ data: { id: string }[] }>().data[0]!.id;
    await call('GET', '/api/console/scans/:id', { url: `/api/console/scans/${scanId}`, session: true });
    const form = multipartBody([{ name: 'file', filename: 'scan.nessus', body: nessus }]);
    const upload = await call('POST', '/api/console/scans', {
      session: true,
      headers: { 'content-type': form.contentType },
      payload: form.body,
    });
    expect(upload.json()).toMatchObject({ status: 'queued', keyId: null });
    await call('GET', '/api/console/exports/cases', {
      url: '/api/console/exports/cases?format=jsonl',
      session: true,
    });
    const job = await call('POST', '/api/console/exports', { session: true, payload: { format: 'csv' } });
    await call('GET', '/api/console/exports/:id', {
      url: `/api/console/exports/${job.json<{ id: string }>().id}`,
      session: true,
    });
  });

  it('exports', async () => {
    const csv = await call('GET', '/api/v1/exports/cases', { url: '/api/v1/exports/cases?format=csv' });
    expect(csv.statusCode).toBe(200);
    const sarif = await call('GET', '/api/v1/exports/cases', { url: '/api/v1/exports/cases?format=sarif' });
    expect(sarif.statusCode).toBe(200);
    const jsonl = await call('GET', '/api/v1/exports/findings', {
      url: '/api/v1/exports/findings?format=jsonl',
    });
    expect(jsonl.statusCode).toBe(200);
    const job = await call('POST', '/api/v1/exports', {
      payload: { format: 'cyclonedx-vex', filter: { kev: true } },
    });
    expect(job.statusCode).toBe(202);
    const id = job.json<{ id: string }>().id;
    expect((await call('GET', '/api/v1/exports/:id', { url: `/api/v1/exports/${id}` })).json()).toMatchObject(
      { id },
    );
  });

  it('workflows and their inbound hooks', async () => {
    const made = await call('POST', '/api/v1/workflows', {
      payload: {
        name: 'KEV to SIEM',
        target: { kind: 'webhook', url: 'https://hooks.example/siem' },
        rule: { kev: true },
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json<{ id: string }>().id;
    await call('GET', '/api/v1/workflows');
    await call('GET', '/api/v1/workflows/:id', { url: `/api/v1/workflows/${id}` });
    await call('PATCH', '/api/v1/workflows/:id', {
      url: `/api/v1/workflows/${id}`,
      payload: { enabled: false },
    });
    await call('GET', '/api/v1/workflows/:id/deliveries', { url: `/api/v1/workflows/${id}/deliveries` });
    const unsigned = await call('POST', '/api/hooks/github/:workflowId', {
      url: `/api/hooks/github/${id}`,
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(unsigned.statusCode).toBeGreaterThanOrEqual(400);
    const gone = await call('DELETE', '/api/v1/workflows/:id', { url: `/api/v1/workflows/${id}` });
    expect(gone.statusCode).toBe(204);
  });

  it('refusals of the key check', async () => {
    expect((await call('GET', '/api/v1/keys/me', { key: null })).statusCode).toBe(401);
    expect((await call('GET', '/api/v1/keys/me', { key: 'svc_notakey' })).statusCode).toBe(401);
  });

  it('covered a broad sample of the document', () => {
    expect(checker.checked.size).toBeGreaterThanOrEqual(60);
  });
});
