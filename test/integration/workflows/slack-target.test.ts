import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signUpWorkflowManager } from '../../helpers/test-app.js';
import {
  eventually,
  startScanApp,
  uploadScan,
  waitForScan,
  type ScanTestApp,
} from '../../helpers/scan-app.js';
import { startFakeSlack, type FakeSlack } from '../../helpers/fake-providers/slack-webhook.js';
import { startDeliveryWorker } from '../../../src/workers/delivery-worker.js';
import { startScanIngestWorker } from '../../../src/workers/scan-ingest-worker.js';
import type { WorkerHandle } from '../../../src/jobs/queue-kit.js';
import { casesChanged } from '../../helpers/case-changes.js';

/**
 * The Slack target end to end: a workflow whose credential is an incoming webhook URL, case
 * events through the real trigger, the `deliveries` queue and a fake Slack on 127.0.0.1 that
 * answers as Slack does (`ok`, `invalid_payload`, `no_service`, `channel_is_archived`, 429 with
 * Retry-After). One Block Kit message per event, Slack's 1 a second as the default limit, never
 * the URL shown.
 */
const NESSUS = readFileSync('test/fixtures/scans/nessus/nessus_many_vuln.xml');
let t: ScanTestApp;
let session: Awaited<ReturnType<typeof signUpWorkflowManager>>;
let slack: FakeSlack;
let ingest: { close(): Promise<void> };
let deliveries: WorkerHandle;

const api = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
  t.app.inject({
    method,
    url,
    headers: { 'x-api-key': session.key, ...(payload ? { 'content-type': 'application/json' } : {}) },
    ...(payload ? { payload: JSON.stringify(payload) } : {}),
  });

type Delivery = { status: string; attempts: number; error: string | null; responseCode: number | null };

async function deliveriesOf(workflowId: string): Promise<Delivery[]> {
  return (await api('GET', `/api/v1/workflows/${workflowId}/deliveries?limit=200`)).json().data as Delivery[];
}

const settled = (workflowId: string, n: number, timeoutMs = 30_000) =>
  eventually(async () => {
    const d = await deliveriesOf(workflowId);
    return d.length >= n && d.every((x) => x.status !== 'pending');
  }, timeoutMs);

/** Uploads the fixture for a fresh asset and answers its case ids. */
async function casesOn(asset: string): Promise<string[]> {
  const res = await uploadScan(t.app, session.key, NESSUS, {}, `?asset=${asset}`);
  expect(res.statusCode).toBe(202);
  const scanId = res.json().scanId as string;
  expect((await waitForScan(t.app, session.key, scanId)).status).toBe('completed');
  const list = await api('GET', `/api/v1/cases?scan=${scanId}&limit=200`);
  return (list.json().data as { id: string }[]).map((c) => c.id);
}

async function createSlackWorkflow(url = slack.webhookUrl, fields: Record<string, unknown> = {}) {
  const res = await api('POST', '/api/v1/workflows', {
    name: 'to Slack',
    target: { kind: 'slack', url },
    fields,
  });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; target: Record<string, unknown>; inboundUrl: string | null };
}

const changed = (caseIds: string[], event: 'case.updated' | 'case.triaged' = 'case.updated') =>
  casesChanged(t.infra.pool, t.deps.workflows.trigger, session.workspaceId, caseIds, event);

beforeAll(async () => {
  t = await startScanApp({
    worker: false,
    env: { WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' },
  });
  session = await signUpWorkflowManager(t.app, { plan: 'trial' });
  slack = await startFakeSlack();
  ingest = startScanIngestWorker({
    queues: t.infra.queues,
    pool: t.infra.pool,
    logger: t.deps.logger,
    config: t.deps.config,
    storage: t.storage,
    batchSize: 100,
    afterScan: t.deps.workflows.trigger.scanCompleted,
  });
  deliveries = startDeliveryWorker(
    t.infra.queues,
    { ...t.deps.workflows.delivery, clock: () => new Date() },
    { logger: t.deps.logger, concurrency: 4, backoff: { baseMs: 50, maxMs: 400 } },
  );
});

// Each test's workflow alone is enabled: the trigger serves every enabled workflow of the workspace.
beforeEach(async () => {
  await t.infra.pool.query('UPDATE workflows SET enabled = false');
  slack.archived = false;
});

afterAll(async () => {
  await deliveries?.close();
  await ingest?.close();
  await slack?.close();
  await t?.close();
});

describe('a Slack workflow', () => {
  it('keeps the webhook URL sealed: no answer, list or audit event shows it, and the row holds it only sealed', async () => {
    const wf = await createSlackWorkflow();
    const token = new URL(slack.webhookUrl).pathname;
    expect(wf.target).toEqual({
      kind: 'slack',
      rateLimit: { requests: 1, perSeconds: 1 },
      credential: '…xxxx',
    });
    expect(wf.inboundUrl).toBeNull();
    for (const url of ['/api/v1/workflows', `/api/v1/workflows/${wf.id}`, '/api/v1/audit-events?limit=200']) {
      const body = (await api('GET', url)).body;
      expect(body).not.toContain(token);
    }
    const { rows } = await t.infra.pool.query('SELECT * FROM workflows WHERE id = $1', [wf.id]);
    expect(JSON.stringify(rows[0])).not.toContain(token);
    expect(rows[0].kind).toBe('slack');
  });

  it('refuses a webhook URL that breaks the outbound rule, and a replacement that does', async () => {
    const res = await api('POST', '/api/v1/workflows', {
      name: 'bad',
      target: { kind: 'slack', url: 'http://hooks.slack.com/services/T/B/x' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([{ path: '/target/url', message: 'must be an https URL' }]);
    const wf = await createSlackWorkflow();
    const patch = await api('PATCH', `/api/v1/workflows/${wf.id}`, { credential: 'not a url' });
    expect(patch.statusCode).toBe(400);
    expect(patch.json().errors).toEqual([{ path: '/credential', message: 'must be an https URL' }]);
  });

  it('posts one Block Kit message per case event, with the case’s facts and a link to its console page', async () => {
    const [first, second, third] = await casesOn('slack1');
    const wf = await createSlackWorkflow();
    const before = slack.requests.length;
    await changed([first!, second!, third!]);
    expect(await settled(wf.id, 3)).toBe(true);
    expect((await deliveriesOf(wf.id)).map((d) => [d.status, d.attempts, d.responseCode])).toEqual([
      ['delivered', 1, 200],
      ['delivered', 1, 200],
      ['delivered', 1, 200],
    ]);
    const sent = slack.requests.slice(before);
    expect(sent).toHaveLength(3);

    const message = sent.find((m) => JSON.stringify(m.body).includes(`/cases/${first}`))!.body;
    const c = (await api('GET', `/api/v1/cases/${first}`)).json() as {
      title: string;
      priority: string | null;
      severity: string;
      asset: { name: string };
    };
    expect(message.text).toContain('Case updated');
    const [header, section, actions] = message.blocks!;
    expect(header).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: `${c.title} on ${c.asset.name}`, emoji: false },
    });
    const facts = (section!.fields as { text: string }[]).map((f) => f.text);
    expect(facts).toEqual([
      `*Priority*\n${c.priority ?? 'untriaged'}`,
      `*Severity*\n${c.severity}`,
      '*Status*\nopen',
      `*Asset*\n${c.asset.name}`,
    ]);
    expect(actions).toMatchObject({
      type: 'actions',
      elements: [
        { type: 'button', url: `${t.deps.config.publicBaseUrl.replace(/\/+$/, '')}/cases/${first}` },
      ],
    });
  });

  it("retries a 429 after its Retry-After and a 5xx; fails at once on invalid_payload with Slack's word", async () => {
    const [a, b] = await casesOn('slack2');
    const wf = await createSlackWorkflow();
    slack.failNext([
      { status: 429, body: 'rate_limited', headers: { 'retry-after': '1' } },
      { status: 500, body: 'rollup_error' },
    ]);
    await changed([a!]);
    expect(await settled(wf.id, 1)).toBe(true);
    expect(await deliveriesOf(wf.id)).toMatchObject([
      { status: 'delivered', attempts: 3, responseCode: 200 },
    ]);

    slack.failNext([{ status: 400, body: 'invalid_payload' }]);
    await changed([b!]);
    expect(await settled(wf.id, 2)).toBe(true);
    expect((await deliveriesOf(wf.id))[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      responseCode: 400,
      error: 'HTTP 400: invalid_payload',
    });
  });

  it('fails at once on an archived channel (410) and on a webhook Slack does not know (404 no_service)', async () => {
    const [a] = await casesOn('slack3');
    const archived = await createSlackWorkflow();
    slack.archived = true;
    await changed([a!]);
    expect(await settled(archived.id, 1)).toBe(true);
    expect(await deliveriesOf(archived.id)).toMatchObject([
      { status: 'failed', attempts: 1, responseCode: 410, error: 'HTTP 410: channel_is_archived' },
    ]);
    await api('PATCH', `/api/v1/workflows/${archived.id}`, { enabled: false });

    slack.archived = false;
    const unknown = await createSlackWorkflow(slack.unknownUrl);
    await changed([a!]);
    expect(await settled(unknown.id, 1)).toBe(true);
    expect(await deliveriesOf(unknown.id)).toMatchObject([
      { status: 'failed', attempts: 1, responseCode: 404, error: 'HTTP 404: no_service' },
    ]);
    // A new URL (the credential) fixes it, and the test delivery says so.
    const patched = await api('PATCH', `/api/v1/workflows/${unknown.id}`, { credential: slack.webhookUrl });
    expect(patched.statusCode).toBe(200);
    const test = await api('POST', `/api/v1/workflows/${unknown.id}/test`);
    expect(test.json()).toMatchObject({ object: 'workflow_test', delivered: true, responseCode: 200 });
    expect(slack.posted.at(-1)!.body.text).toContain('Test message');
  });
});
