import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { createTestDatabase, testRedisUrl } from '../../helpers/db.js';
import { startServerProcess } from '../../helpers/server-process.js';
import { TEST_PEPPER } from '../../helpers/test-app.js';
import { createQueueKit } from '../../../src/jobs/queue-kit.js';
import { recordModelCalls } from '../../../src/domain/usage/ledger-store.js';

const run = promisify(execFile);
const tightPlans = path.resolve('test/fixtures/foundation/tight-plans.json');
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ env: { PLANS_FILE: tightPlans } });
});
afterAll(async () => {
  await t.close();
});

describe('per-key rate limit', () => {
  it('answers 429 rate_limited with Retry-After and RateLimit-* headers past the plan limit', async () => {
    const s = await signUp(t.app, { plan: 'free' });
    const get = () => t.app.inject({ method: 'GET', url: '/api/v1/models', headers: { 'x-api-key': s.key } });
    const first = await get();
    expect(first.headers['ratelimit-limit']).toBe('5');
    expect(first.headers['ratelimit-remaining']).toBe('4');
    for (let i = 0; i < 4; i++) expect((await get()).statusCode).toBe(200);
    const limited = await get();
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    t.clock.advance(61_000);
    expect((await get()).statusCode).toBe(200);
  });
});

describe('models catalog', () => {
  it('returns exactly the two entries of docs/triage.md#model-catalog', async () => {
    const s = await signUp(t.app);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/models', headers: { 'x-api-key': s.key } });
    expect(res.json()).toEqual({
      object: 'list',
      data: [
        {
          id: 'svc-triage-v1',
          object: 'model',
          name: 'Triage v1',
          stage: 'Alpha',
          default: true,
          routineTier: false,
          description: expect.any(String),
          pricing: { currency: 'USD', unit: '1M tokens', input: '3.00', output: '15.00' },
          minimumTier: 'free',
          max: 8192,
        },
        {
          id: 'svc-triage-routine',
          object: 'model',
          name: 'Triage Routine',
          stage: 'Alpha',
          default: false,
          routineTier: true,
          description: expect.any(String),
          pricing: { currency: 'USD', unit: '1M tokens', input: '0.10', output: '0.40' },
          minimumTier: 'free',
          max: 32768,
        },
      ],
    });
  });
});

describe('usage', () => {
  it('reports requests, AI calls, tokens and exact spend per key and per workspace', async () => {
    const s = await signUp(t.app, { plan: 'free' });
    const other = await signUp(t.app, { plan: 'free' });
    const at = t.clock();
    await recordModelCalls(t.infra.pool, [
      {
        workspaceId: s.workspaceId,
        keyId: s.keyId,
        requestId: 'r1',
        tier: 'routine',
        catalogModel: 'svc-triage-routine',
        providerModel: 'local:ssvc',
        inputTokens: 1000,
        outputTokens: 200,
        costPicos: 180_000_000n,
        aiCall: true,
        at,
      },
      {
        workspaceId: s.workspaceId,
        keyId: s.keyId,
        requestId: 'r2',
        tier: 'escalated-1',
        catalogModel: 'svc-triage-v1',
        providerModel: 'local:ssvc',
        inputTokens: 500,
        outputTokens: 100,
        costPicos: 3_000_000_000n,
        aiCall: true,
        at,
      },
      {
        workspaceId: other.workspaceId,
        keyId: other.keyId,
        requestId: 'r3',
        tier: 'routine',
        catalogModel: 'svc-triage-routine',
        providerModel: 'local:ssvc',
        inputTokens: 9,
        outputTokens: 9,
        costPicos: 5_000_000n,
        aiCall: true,
        at,
      },
    ]);
    await t.app.inject({ method: 'GET', url: '/api/v1/models', headers: { 'x-api-key': s.key } });
    await t.deps.meter.flush();
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/usage', headers: { 'x-api-key': s.key } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.key).toMatchObject({
      id: s.keyId,
      requests: 1,
      aiCalls: 2,
      inputTokens: 1500,
      outputTokens: 300,
      spendMicros: '3180',
      spendUsd: '0.003180',
    });
    expect(body.workspace).toMatchObject({
      id: s.workspaceId,
      plan: 'free',
      aiCalls: 2,
      spendUsd: '0.003180',
      aiCallLimit: 3,
    });
    expect(body.key.daily.at(-1)).toMatchObject({ date: at.toISOString().slice(0, 10), aiCalls: 2 });
    // How fresh the batched request counts are (docs/triage.md#usage): every request before asOf counted.
    expect(Date.parse(body.asOf)).toBe(t.clock().getTime() - 1000);
    const bad = await t.app.inject({
      method: 'GET',
      url: '/api/v1/usage?from=2026-13-01&bogus=1',
      headers: { 'x-api-key': s.key },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_request');
    // `last used` and request counts are written by the request meter's flush, not per request.
    await t.deps.meter.flush();
    const keys = await t.app.inject({
      method: 'GET',
      url: '/api/console/keys',
      headers: { cookie: s.cookie },
    });
    expect(keys.json().data[0]).toMatchObject({
      id: s.keyId,
      lastUsedAt: expect.any(String),
      usage: { requests: 3, tokens: 1800, spendUsd: '0.003180' },
    });
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/keys/me', headers: { 'x-api-key': s.key } });
    expect(Date.parse(me.json().asOf)).toBe(t.clock().getTime() - t.deps.config.keyCacheTtlMs - 1000);
  });
});

const backends = [
  { name: 'PostgreSQL', redisUrl: null as string | null },
  { name: 'Redis', redisUrl: testRedisUrl() || null },
];
if (!backends[1]!.redisUrl)
  console.warn('[runtime.test] Redis not reachable: the Redis queue case is SKIPPED.');

describe.each(backends)('queues on $name', ({ name, redisUrl }) => {
  it.skipIf(name === 'Redis' && !redisUrl)('runs jobs through the same queue kit', async () => {
    const kit = createQueueKit({
      redisUrl,
      databaseUrl: t.databaseUrl,
      namespace: `kit${Date.now().toString(36)}`,
    });
    const queue = kit.queue<{ n: number }>('double');
    const seen: number[] = [];
    const worker = kit.worker<{ n: number }, number>('double', async (job) => {
      seen.push(job.data.n);
      return job.data.n * 2;
    });
    await queue.addBulk(Array.from({ length: 20 }, (_, n) => ({ name: 'n', data: { n } })));
    for (let i = 0; i < 200 && seen.length < 20; i++) await new Promise((r) => setTimeout(r, 50));
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, n) => n));
    await kit.ping();
    await worker.close();
    await kit.close();
  });
});

describe('processes', () => {
  it('admin create-workspace prints the workspace id and a working first key', async () => {
    const { stdout } = await run(
      'node',
      ['--import', 'tsx', 'src/cli/admin.ts', 'create-workspace', '--name', 'Ops', '--plan', 'trial'],
      {
        env: {
          ...process.env,
          DATABASE_URL: t.databaseUrl,
          KEY_PEPPER: 'test-pepper-'.padEnd(48, 'x'),
          LOG_LEVEL: 'warn',
        },
      },
    );
    const id = /workspace (\S+)/.exec(stdout)![1]!;
    const key = /api_key (\S+)/.exec(stdout)![1]!;
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/keys/me', headers: { 'x-api-key': key } });
    expect(me.json().workspace).toMatchObject({ id, name: 'Ops', plan: 'trial' });
    const audit = await t.infra.pool.query(
      `SELECT actor FROM key_audit_events WHERE workspace_id = $1 AND action = 'create'`,
      [id],
    );
    expect(audit.rows).toEqual([{ actor: 'operator' }]);
  });

  it('admin refuses bad arguments with a usage line and exit code 2', async () => {
    await expect(
      run('node', ['--import', 'tsx', 'src/cli/admin.ts', 'create-workspace', '--plan', 'gold']),
    ).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('usage: npm run admin -- create-workspace'),
    });
  });

  it('refuses to start on a bad setting, naming it', async () => {
    await expect(
      run('node', ['--import', 'tsx', 'src/main.ts'], {
        env: { ...process.env, PORT: 'x', DATA_DIR: '/tmp/unused' },
      }),
    ).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('PORT: expected a whole number'),
    });
  });

  it('web + worker in one process: ready, then a clean exit on SIGTERM', async () => {
    const db = await createTestDatabase();
    const server = await startServerProcess('all', {
      DATABASE_URL: db.url,
      KEY_PEPPER: TEST_PEPPER,
      REDIS_URL: '',
    });
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${server.url}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ready' });
      expect(await server.stop('SIGTERM')).toBe(0);
    } finally {
      await server.stop();
      await db.drop();
    }
  }, 60_000);
});
