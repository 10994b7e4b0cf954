import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { createTestDatabase } from '../helpers/db.js';
import {
  signUpOverHttp,
  startServerProcess,
  type HttpSignup,
  type ServerProcess,
} from '../helpers/server-process.js';
import { TEST_PEPPER } from '../helpers/test-app.js';
import { multipartBody } from '../helpers/scan-app.js';
import { hasRedisServer, startPrivateRedis, type PrivateRedis } from './private-redis.js';

if (!hasRedisServer) console.warn('[faults/database-kill] no redis-server binary: these cases are SKIPPED.');

/*
 * A failover, a restart or a connection-limit kill ends the service's database sessions under
 * it. With every backend of the service's database terminated every 0.2–0.3 s during traffic
 * over every route family, served by a `web` and a `worker` process, neither process exits and
 * no answer is a 500: a lost connection is a 503 `overloaded` with Retry-After, or the answer
 * itself after one retry (docs/operations.md#failure-behaviour).
 */

const nessus = readFileSync(path.resolve('test/fixtures/scans/nessus/nessus_v_unknown.xml'));
/** How long the database is under fire. */
const KILL_WINDOW_MS = 12_000;
/** No request may hang: past this it counts as a failure. */
const REQUEST_TIMEOUT_MS = 20_000;

interface Answer {
  route: string;
  status: number;
  retryAfter: string | null;
  body: string;
}

describe.skipIf(!hasRedisServer)('database backends terminated during traffic', () => {
  let redis: PrivateRedis;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let web: ServerProcess;
  let worker: ServerProcess;
  let user: HttpSignup;
  let caseIds: string[] = [];
  let workflowId = '';

  beforeAll(async () => {
    redis = await startPrivateRedis();
    db = await createTestDatabase();
    const env = {
      DATABASE_URL: db.url,
      KEY_PEPPER: TEST_PEPPER,
      REDIS_URL: redis.url,
      REDIS_PREFIX: `dbkill${Date.now().toString(36)}`,
      SCAN_STORAGE_DIR: mkdtempSync(path.join(tmpdir(), 'dbkill-')),
    };
    web = await startServerProcess('web', env);
    worker = await startServerProcess('worker', env);
    user = await signUpOverHttp(web.url);
    // Workflows need the service plan (and the first key may not manage them: the console does).
    expect(
      (await call('POST', '/api/console/plan', { session: true, json: { plan: 'service' } })).status,
    ).toBe(200);
    // Cases to read, change and triage while the connections die.
    const up = await call('POST', '/api/pipeline/scan?name=seed', { raw: nessus, type: 'application/xml' });
    expect(up.status).toBe(202);
    const scanId = (JSON.parse(up.body) as { scanId: string }).scanId;
    let seeded = '';
    for (let i = 0; i < 600 && seeded !== 'completed'; i++) {
      seeded = (JSON.parse((await call('GET', `/api/pipeline/scan/${scanId}`)).body) as { status: string })
        .status;
      if (seeded !== 'completed') await new Promise((r) => setTimeout(r, 100));
    }
    expect(seeded).toBe('completed');
    const cases = JSON.parse((await call('GET', '/api/v1/cases?limit=20')).body) as {
      data: { id: string }[];
    };
    caseIds = cases.data.map((c) => c.id);
    expect(caseIds.length).toBeGreaterThan(1);
    const made = await call('POST', '/api/console/workflows', {
      session: true,
      json: { name: 'All to SIEM', target: { kind: 'webhook', url: 'https://hooks.example/siem' }, rule: {} },
    });
    expect(made.status).toBe(201);
    workflowId = (JSON.parse(made.body) as { id: string }).id;
  }, 120_000);

  afterAll(async () => {
    await web?.stop('SIGKILL');
    await worker?.stop('SIGKILL');
    await db?.drop();
    await redis?.kill();
  });

  async function call(
    method: string,
    url: string,
    opts: { json?: unknown; raw?: Buffer; type?: string; session?: boolean } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = opts.session
      ? { cookie: user.cookie, 'x-csrf-token': user.csrf }
      : { 'x-api-key': user.key };
    let body: string | Buffer | undefined;
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.json);
    } else if (opts.raw) {
      headers['content-type'] = opts.type ?? 'application/octet-stream';
      body = opts.raw;
    }
    const res = await fetch(`${web.url}${url}`, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    return {
      route: `${method} ${url}`,
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: await res.text(),
    };
  }

  /** One pass over every route family, API key and console surface, reads and writes. */
  function oneRound(round: number): Promise<Answer>[] {
    const caseId = caseIds[round % caseIds.length]!;
    const status = round % 2 === 0 ? 'in_progress' : 'open';
    const form = multipartBody([{ name: 'file', filename: 'scan.nessus', body: nessus }]);
    return [
      call('GET', '/api/v1/keys/me'),
      call('GET', '/api/v1/usage'),
      call('GET', '/api/v1/audit-events?limit=5'),
      call('POST', '/api/v1/triage', { json: { title: 'Outdated OpenSSL', severity: 'MEDIUM' } }),
      call('POST', '/api/v1/triage/batch', { json: { items: [{ title: 'Old zlib', severity: 'LOW' }] } }),
      call('POST', `/api/pipeline/scan?name=r${round}`, { raw: nessus, type: 'application/xml' }),
      call('GET', '/api/v1/scans'),
      call('GET', '/api/v1/findings?limit=5'),
      call('GET', '/api/v1/cases?limit=5'),
      call('GET', `/api/v1/cases/${caseId}`),
      call('PATCH', `/api/v1/cases/${caseId}`, { json: { status } }),
      call('POST', `/api/v1/cases/${caseId}/triage`),
      call('POST', '/api/v1/cases/triage', { json: { caseIds: [caseId] } }),
      call('GET', '/api/v1/exports/cases?format=csv'),
      call('POST', '/api/v1/exports', { json: { format: 'jsonl' } }),
      call('GET', '/api/v1/workflows'),
      call('GET', `/api/v1/workflows/${workflowId}/deliveries`),
      call('GET', '/api/console/session', { session: true }),
      call('GET', '/api/console/dashboard', { session: true }),
      call('GET', '/api/console/cases', { session: true }),
      call('POST', '/api/console/cases/status', { session: true, json: { status, caseIds: [caseId] } }),
      call('POST', '/api/console/cases/triage/preview', { session: true, json: { caseIds: [caseId] } }),
      call('GET', '/api/console/scans', { session: true }),
      call('POST', '/api/console/scans', { session: true, raw: form.body, type: form.contentType }),
      call('POST', '/api/console/exports', { session: true, json: { format: 'csv' } }),
      call('GET', '/api/console/workflows', { session: true }),
      call('GET', '/api/console/keys', { session: true }),
      call('GET', '/readyz'),
    ];
  }

  it(
    'keeps both processes up and answers no 500 while its backends are terminated every 0.2–0.3 s',
    { timeout: 180_000 },
    async () => {
      const admin = new pg.Client(inject('pgAdminUrl'));
      await admin.connect();
      const dbName = new URL(db.url).pathname.slice(1);
      let killing = true;
      let terminated = 0;
      const killer = (async () => {
        while (killing) {
          const { rows } = await admin.query<{ n: number }>(
            `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
              WHERE datname = $1 AND pid <> pg_backend_pid()`,
            [dbName],
          );
          terminated += rows[0]!.n;
          await new Promise((r) => setTimeout(r, 200 + Math.random() * 100));
        }
      })();

      const answers: Answer[] = [];
      const failures: string[] = [];
      const started = Date.now();
      try {
        for (let round = 0; round < 200 && Date.now() - started < KILL_WINDOW_MS; round++) {
          for (const settled of await Promise.allSettled(oneRound(round))) {
            if (settled.status === 'fulfilled') answers.push(settled.value);
            else failures.push(String(settled.reason));
          }
        }
      } finally {
        killing = false;
        await killer;
        await admin.end();
      }

      expect(terminated).toBeGreaterThan(20);
      expect(failures).toEqual([]);
      expect(answers.length).toBeGreaterThan(50);
      const fivehundreds = answers.filter((a) => a.status >= 500 && a.status !== 503);
      expect(fivehundreds.map((a) => `${a.route} ${a.status} ${a.body}`)).toEqual([]);
      for (const a of answers.filter((x) => x.status === 503)) {
        expect(a.retryAfter, a.route).toMatch(/^\d+$/);
        expect(JSON.parse(a.body)).toMatchObject({ status: 503, code: 'overloaded' });
      }
      // The terminations reached the answers: some of them were refused for it.
      expect(answers.some((a) => a.status === 503)).toBe(true);

      for (const p of [web, worker]) {
        expect(p.child.exitCode, p.output()).toBeNull();
        expect(p.output()).not.toMatch(/Unhandled 'error' event|uncaughtException|unhandledRejection/);
      }

      // Both still work once the database is left alone: the web answers, the worker ingests.
      let ready = 0;
      for (let i = 0; i < 100 && ready !== 200; i++) {
        ready = (await call('GET', '/readyz')).status;
        if (ready !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(ready).toBe(200);
      const up = await call('POST', '/api/pipeline/scan?name=after', {
        raw: nessus,
        type: 'application/xml',
      });
      expect(up.status).toBe(202);
      const scanId = (JSON.parse(up.body) as { scanId: string }).scanId;
      let scan = { status: '' };
      for (let i = 0; i < 300 && scan.status !== 'completed'; i++) {
        scan = JSON.parse((await call('GET', `/api/pipeline/scan/${scanId}`)).body) as { status: string };
        if (scan.status !== 'completed') await new Promise((r) => setTimeout(r, 100));
      }
      expect(scan.status).toBe('completed');
    },
  );
});
