import { createServer, type Server } from 'node:http';
import { createHmac } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { testRedisUrl } from '../../helpers/db.js';
import { pollBatch, startTriageTestWorker } from '../../helpers/triage-setup.js';
import type { WorkerHandle } from '../../../src/jobs/queue-kit.js';

const redisUrl = testRedisUrl();
if (!redisUrl) console.warn('[batch.test] Redis not reachable: the Redis batch case is SKIPPED.');

const opened: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const o of opened.reverse()) await o.close();
});

async function appWithWorker(
  redis: string | null,
  env: Record<string, string> = {},
): Promise<{ t: TestApp; worker: WorkerHandle }> {
  const t = await startTestApp({
    ...(redis ? { redisUrl: redis } : {}),
    // The webhook receiver is on 127.0.0.1: both test-only settings are needed to reach it.
    env: { WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', ...env },
  });
  const worker = startTriageTestWorker(t, {}, 16);
  opened.push(t);
  opened.push(worker);
  return { t, worker };
}

function item(i: number) {
  return i % 3 === 0
    ? { cveIds: ['CVE-2021-44228'], title: `Log4Shell #${i}`, severity: 'CRITICAL', cvssScore: 10 }
    : { title: `Weak TLS cipher #${i}`, severity: 'LOW', description: 'TLS 1.0 enabled on an internal host' };
}

describe.each([
  { name: 'PostgreSQL', redis: null as string | null },
  { name: 'Redis', redis: redisUrl || null },
])('batch triage on $name', ({ name, redis }) => {
  it.skipIf(name === 'Redis' && !redis)(
    'completes 500 items, bills 500 AI calls, pages results and signs the webhook',
    async () => {
      const { t } = await appWithWorker(redis);
      const s = await signUp(t.app, { plan: 'trial' });
      const hook = await webhookReceiver();
      opened.push(hook);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/triage/batch',
        headers: { 'x-api-key': s.key },
        payload: {
          items: Array.from({ length: 500 }, (_, i) => item(i)),
          webhookUrl: `${hook.url}/hooks/triage`,
        },
      });
      expect(res.statusCode).toBe(202);
      const accepted = res.json();
      expect(accepted).toEqual({
        batchId: expect.any(String),
        status: 'queued',
        total: 500,
        statusUrl: `/api/v1/triage/batch/${accepted.batchId}`,
      });
      const done = await pollBatch(t, s.key, accepted.batchId);
      expect(done).toMatchObject({
        status: 'completed',
        total: 500,
        completed: 500,
        failed: 0,
        finishedAt: expect.any(String),
      });
      expect(done.items).toHaveLength(500);
      expect(done.items.map((i: { index: number }) => i.index)).toEqual(
        Array.from({ length: 500 }, (_, i) => i),
      );
      expect(done.items[0].result).toMatchObject({
        priority: expect.stringMatching(/CRITICAL|HIGH/),
        model: expect.stringMatching(/^local:/),
      });

      const page1 = await t.app.inject({
        method: 'GET',
        url: `/api/v1/triage/batch/${accepted.batchId}?limit=200`,
        headers: { 'x-api-key': s.key },
      });
      const page2 = await t.app.inject({
        method: 'GET',
        url: `/api/v1/triage/batch/${accepted.batchId}?limit=200&cursor=${page1.json().nextCursor}`,
        headers: { 'x-api-key': s.key },
      });
      expect(page2.json().items[0].index).toBe(200);

      const ledger = await t.infra.pool.query(
        `SELECT count(*) FILTER (WHERE ai_call)::int AS calls FROM usage_ledger WHERE key_id = $1`,
        [s.keyId],
      );
      expect(ledger.rows[0].calls).toBe(500);
      const quota = await t.infra.pool.query(
        `SELECT used, reserved FROM ai_call_quota WHERE workspace_id = $1`,
        [s.workspaceId],
      );
      expect(quota.rows[0]).toEqual({ used: 500, reserved: 0 });

      for (let i = 0; i < 100 && hook.received.length === 0; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(hook.received).toHaveLength(1);
      const got = hook.received[0]!;
      const signingKey = createHmac('sha256', s.key).update(`webhook:${accepted.batchId}`).digest('hex');
      const expected = `sha256=${createHmac('sha256', signingKey).update(`${got.headers['x-webhook-timestamp']}.${got.body}`).digest('hex')}`;
      expect(got.headers['x-webhook-signature']).toBe(expected);
      expect(JSON.parse(got.body)).toMatchObject({
        type: 'triage.batch.finished',
        batchId: accepted.batchId,
        status: 'completed',
        completed: 500,
      });
      expect(got.body).not.toContain(s.key);
    },
    180_000,
  );
});

describe('batch limits', () => {
  it('rejects more items than the plan allows, bad items by index, and a batch that does not fit the quota', async () => {
    const { t } = await appWithWorker(null, { PLANS_FILE: 'test/fixtures/foundation/tight-plans.json' });
    const s = await signUp(t.app, { plan: 'free' });
    const post = (payload: unknown) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/triage/batch',
        headers: { 'x-api-key': s.key },
        payload: payload as object,
      });
    const tooMany = await post({ items: [item(1), item(2), item(3)] });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().errors).toEqual([{ path: '/items', message: 'must NOT have more than 2 items' }]);
    const badItem = await post({ items: [item(1), { title: 'x', severity: 'NOPE', description: 'd' }] });
    expect(badItem.json().errors).toEqual([expect.objectContaining({ path: '/items/1/severity' })]);
    const badHook = await post({ items: [item(1)], webhookUrl: 'http://example.com/hook' });
    expect(badHook.json().errors).toEqual([{ path: '/webhookUrl', message: 'must be an https URL' }]);

    // The plan allows 3 AI calls a month (and 5 requests a minute): two singles use two,
    // then a batch of two does not fit.
    t.clock.advance(61_000);
    const single = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/triage',
        headers: { 'x-api-key': s.key },
        payload: item(1),
      });
    expect((await single()).statusCode).toBe(200);
    expect((await single()).statusCode).toBe(200);
    const over = await post({ items: [item(1), item(2)] });
    expect(over.statusCode).toBe(429);
    expect(over.json()).toEqual({
      type: 'https://docs.vulntriage.dev/errors/monthly_limit_exceeded',
      title: 'Monthly AI-call limit exceeded',
      status: 429,
      code: 'monthly_limit_exceeded',
      detail: 'This workspace has 1 of its 3 AI calls left for this month; the batch asks for 2.',
      requestId: expect.any(String),
    });
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    // The RateLimit-* fields are the key's request rate (this is its third request of the
    // minute, of 5), never a monthly "0 remaining" beside a detail that says 1 remains.
    expect(over.headers['ratelimit-limit']).toBe('5');
    expect(over.headers['ratelimit-remaining']).toBe('2');
    expect((await single()).statusCode).toBe(200);
    t.clock.advance(61_000);
    expect((await single()).json().code).toBe('monthly_limit_exceeded');
  });

  it('under concurrency, exactly the monthly limit of single calls succeeds', async () => {
    const { t } = await appWithWorker(null, { PLANS_FILE: 'test/fixtures/foundation/tight-plans.json' });
    const s = await signUp(t.app, { plan: 'trial' }); // service limits in this file: 10 AI calls, 8 requests/min
    const eightCalls = () =>
      Promise.all(
        Array.from({ length: 8 }, () =>
          t.app.inject({
            method: 'POST',
            url: '/api/v1/triage',
            headers: { 'x-api-key': s.key },
            payload: item(2),
          }),
        ),
      );
    const results = await eightCalls();
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(8);
    t.clock.advance(61_000);
    const more = await eightCalls();
    expect(more.filter((r) => r.statusCode === 200)).toHaveLength(2);
    expect(
      more.filter((r) => r.statusCode === 429 && r.json().code === 'monthly_limit_exceeded'),
    ).toHaveLength(6);
  });

  it("another workspace's batch is not found", async () => {
    const { t } = await appWithWorker(null);
    const a = await signUp(t.app);
    const b = await signUp(t.app);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/triage/batch',
      headers: { 'x-api-key': a.key },
      payload: { items: [item(1)] },
    });
    const id = res.json().batchId;
    for (const url of [`/api/v1/triage/batch/${id}`, '/api/v1/triage/batch/not-a-uuid']) {
      const other = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': b.key } });
      expect(other.statusCode).toBe(404);
      expect(other.json()).toMatchObject({ code: 'not_found', detail: 'No such batch.' });
    }
  });
});

async function webhookReceiver(): Promise<{
  url: string;
  received: { headers: Record<string, string>; body: string }[];
  close(): Promise<void>;
}> {
  const received: { headers: Record<string, string>; body: string }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += String(c)));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
