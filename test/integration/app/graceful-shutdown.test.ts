import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../helpers/db.js';
import { signUpOverHttp, startServerProcess, type ServerProcess } from '../../helpers/server-process.js';
import { TEST_PEPPER } from '../../helpers/test-app.js';
import { startOpenAiFake } from '../../helpers/fake-providers/openai-fake.js';
import type { FakeServer } from '../../helpers/fake-providers/fake-server.js';

const procs: ServerProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop('SIGKILL')));
  for (const c of cleanups) await c();
});

/** A provider that takes 1.5 s, so a request or job is surely in flight when SIGTERM arrives. */
async function slowProviderEnv(): Promise<{ fake: FakeServer; env: Record<string, string> }> {
  const fake = await startOpenAiFake([{ kind: 'slow', delayMs: 1500, then: { kind: 'success' } }]);
  cleanups.push(() => fake.close());
  const dir = mkdtempSync(path.join(tmpdir(), 'shutdown-'));
  writeFileSync(path.join(dir, 'triage.json'), readFileSync('config/triage.json'));
  const db = await createTestDatabase();
  cleanups.push(db.drop);
  return {
    fake,
    env: {
      DATABASE_URL: db.url,
      KEY_PEPPER: TEST_PEPPER,
      REDIS_URL: '',
      LOG_LEVEL: 'info',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: `${fake.url}/v1`,
      TRIAGE_CONFIG_FILE: path.join(dir, 'triage.json'),
    },
  };
}

const finding = {
  title: 'Outdated OpenSSL',
  severity: 'MEDIUM',
  description: 'OpenSSL 1.1.1 is end of life',
};

describe('graceful shutdown on SIGTERM', () => {
  it('finishes a request in flight, then exits 0', async () => {
    const { env } = await slowProviderEnv();
    const web = await startServerProcess('web', env);
    procs.push(web);
    const { key } = await signUpOverHttp(web.url);
    const pending = fetch(`${web.url}/api/v1/triage`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(finding),
    });
    await new Promise((r) => setTimeout(r, 400));
    const exited = web.stop('SIGTERM');
    const res = await pending;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { model: string }).model).toMatch(/^openai:/);
    const code = await exited;
    if (code !== 0) console.error(web.output());
    expect(code).toBe(0);
  }, 60_000);

  it('lets a running job finish before the worker exits', async () => {
    const { env, fake } = await slowProviderEnv();
    const web = await startServerProcess('web', env);
    procs.push(web);
    const { key } = await signUpOverHttp(web.url);
    const accepted = await fetch(`${web.url}/api/v1/triage/batch`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ items: [finding] }),
    });
    const { batchId } = (await accepted.json()) as { batchId: string };
    const worker = await startServerProcess('worker', env);
    procs.push(worker);
    const c = new pg.Client(env.DATABASE_URL);
    await c.connect();
    try {
      // Wait until the item's provider call (1.5 s) is under way, then stop the worker.
      for (let i = 0; i < 400 && fake.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(fake.requests).toHaveLength(1);
      const before = await c.query(`SELECT status FROM triage_batch_items WHERE batch_id = $1`, [batchId]);
      expect(before.rows).toEqual([{ status: 'queued' }]);
      expect(await worker.stop('SIGTERM')).toBe(0);
      const item = await c.query(`SELECT status FROM triage_batch_items WHERE batch_id = $1`, [batchId]);
      expect(item.rows).toEqual([{ status: 'completed' }]);
    } finally {
      await c.end();
    }
  }, 60_000);
});
