import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { startTriageWorker } from '../../../src/workers/triage-worker.js';
import { makeWebhookDeliverer, type WebhookDeliveryOptions } from '../../../src/domain/triage/webhook.js';
import { INVALID_FIELDS_DETAIL } from '../../../src/lib/errors.js';

/**
 * Batch webhooks must not become server-side request forgery (docs/triage.md#batch-webhooks): internal URLs are
 * refused when the batch is accepted, and names that resolve to internal addresses are refused when
 * the webhook is delivered. Runs on the PostgreSQL queue backend; the receiver is on 127.0.0.1.
 */
const opened: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const o of opened.reverse()) await o.close();
});

const ITEM = { cveIds: ['CVE-2021-44228'], title: 'Log4Shell', severity: 'CRITICAL', cvssScore: 10 };

/** The app and a triage worker whose deliverer is built from the app's settings, plus `extra` options. */
async function appWithWorker(
  env: Record<string, string>,
  extra: WebhookDeliveryOptions = {},
): Promise<TestApp> {
  const t = await startTestApp({ env });
  const deliverer = makeWebhookDeliverer(t.deps.config);
  const worker = startTriageWorker(
    t.infra.queues,
    {
      db: t.infra.pool,
      triage: t.deps.triage,
      pepper: t.infra.pepper,
      clock: t.clock,
      deliver: (url, key, payload, options) => deliverer(url, key, payload, { ...options, ...extra }),
    },
    { concurrency: 4, logger: t.deps.logger },
  );
  opened.push(t, worker);
  return t;
}

/** A receiver on 127.0.0.1 answering with the statuses given, in turn (the last one repeats). */
async function receiver(statuses: number[]) {
  const bodies: string[] = [];
  let connections = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += String(c)));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(statuses[Math.min(bodies.length, statuses.length) - 1]!).end();
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  opened.push({ close: () => new Promise((r) => server.close(() => r())) });
  const port = (server.address() as AddressInfo).port;
  return { port, bodies, connections: () => connections };
}

async function submit(t: TestApp, key: string, webhookUrl: string) {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/triage/batch',
    headers: { 'x-api-key': key },
    payload: { items: [ITEM, { ...ITEM, title: 'Log4Shell again' }], webhookUrl },
  });
}

/** The batch's GET once its webhook has an outcome (neither not-yet-finished nor pending). */
async function settled(t: TestApp, key: string, id: string) {
  const until = Date.now() + 60_000;
  for (;;) {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/triage/batch/${id}`,
      headers: { 'x-api-key': key },
    });
    const body = res.json();
    if (![null, 'pending'].includes(body.webhookStatus) || Date.now() > until) return body;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('batch webhookUrl at acceptance (default settings)', () => {
  const HOST = 'must not point to a private, loopback or internal host';

  it.each([
    ['https://169.254.169.254/latest/meta-data/iam/security-credentials/', HOST],
    ['https://[::ffff:169.254.169.254]/latest/meta-data/', HOST],
    ['https://localhost/hook', HOST],
    ['https://hooks.localhost/hook', HOST],
    ['https://metadata.google.internal/computeMetadata/v1/', HOST],
    ['https://10.0.0.7:8443/hook', HOST],
    ['https://192.168.1.1/hook', HOST],
    ['https://127.0.0.1/hook', HOST],
    ['https://[::1]/hook', HOST],
    ['https://[fd00::5]/hook', HOST],
    ['https://0.0.0.0/hook', HOST],
    ['https://user:secret@hooks.example.com/hook', 'must not contain credentials'],
    ['http://hooks.example.com/hook', 'must be an https URL'],
    ['http://127.0.0.1:9/hook', 'must be an https URL'],
  ])('refuses %s with 400 at /webhookUrl, reserving nothing', async (webhookUrl, message) => {
    const t = await shared();
    const s = await signUp(t.app, { plan: 'trial' });
    const res = await submit(t, s.key, webhookUrl);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toEqual({
      type: 'https://docs.vulntriage.dev/errors/invalid_request',
      title: 'Invalid request',
      status: 400,
      code: 'invalid_request',
      detail: INVALID_FIELDS_DETAIL,
      requestId: res.headers['x-request-id'],
      errors: [{ path: '/webhookUrl', message }],
    });
    const batches = await t.infra.pool.query(
      `SELECT count(*)::int AS n FROM triage_batches WHERE workspace_id = $1`,
      [s.workspaceId],
    );
    expect(batches.rows[0].n).toBe(0);
  });

  let app: Promise<TestApp> | undefined;
  function shared(): Promise<TestApp> {
    app ??= appWithWorker({});
    return app;
  }
});

describe('batch webhook delivery', () => {
  it('refuses a name that resolves to 127.0.0.1 when private hosts are off, and GET shows refused_address', async () => {
    const hook = await receiver([200]);
    const asked: string[] = [];
    const t = await appWithWorker(
      {},
      {
        resolve: async (name) => {
          asked.push(name);
          return [{ address: '127.0.0.1', family: 4 }];
        },
      },
    );
    expect(t.deps.config.webhookAllowPrivateHosts).toBe(false);
    const s = await signUp(t.app, { plan: 'trial' });
    // A public-looking name passes acceptance: what it resolves to is checked when we connect.
    const res = await submit(t, s.key, `https://hooks.example.com:${hook.port}/triage`);
    expect(res.statusCode).toBe(202);
    const done = await settled(t, s.key, res.json().batchId);
    expect(done).toMatchObject({
      status: 'completed',
      completed: 2,
      failed: 0,
      webhookStatus: 'refused_address',
    });
    expect(asked).toEqual(['hooks.example.com']); // refused once, not retried
    expect(hook.connections()).toBe(0);
  });

  it('with WEBHOOK_ALLOW_PRIVATE_HOSTS, retries a receiver answering 500 then 200; GET shows delivered', async () => {
    const hook = await receiver([500, 200]);
    const t = await appWithWorker({
      WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true',
    });
    const s = await signUp(t.app, { plan: 'trial' });
    const res = await submit(t, s.key, `http://127.0.0.1:${hook.port}/triage`);
    expect(res.statusCode).toBe(202);
    const done = await settled(t, s.key, res.json().batchId);
    expect(done).toMatchObject({ status: 'completed', webhookStatus: 'delivered' });
    expect(hook.bodies).toHaveLength(2);
    expect(JSON.parse(hook.bodies[1]!)).toMatchObject({
      type: 'triage.batch.finished',
      batchId: done.batchId,
    });
  });

  it('a receiver that keeps answering 500 gets every attempt; GET shows http_500', async () => {
    const hook = await receiver([500]);
    const t = await appWithWorker({
      WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true',
    });
    const s = await signUp(t.app, { plan: 'trial' });
    const res = await submit(t, s.key, `http://127.0.0.1:${hook.port}/triage`);
    const done = await settled(t, s.key, res.json().batchId);
    expect(done).toMatchObject({ status: 'completed', webhookStatus: 'http_500' });
    expect(hook.bodies).toHaveLength(3);
  });

  it('loopback http alone admits http://127.0.0.1 at acceptance, but delivery still refuses it', async () => {
    const hook = await receiver([200]);
    const t = await appWithWorker({ WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true' });
    const s = await signUp(t.app, { plan: 'trial' });
    const res = await submit(t, s.key, `http://127.0.0.1:${hook.port}/triage`);
    expect(res.statusCode).toBe(202);
    const done = await settled(t, s.key, res.json().batchId);
    expect(done.webhookStatus).toBe('refused_address');
    expect(hook.connections()).toBe(0);
  });
});
