import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase } from '../../helpers/db.js';
import { signUpOverHttp, startServerProcess, type ServerProcess } from '../../helpers/server-process.js';
import { TEST_PEPPER } from '../../helpers/test-app.js';

const running: ServerProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop('SIGKILL')));
  for (const c of cleanups) await c();
});

describe('batch triage survives a worker killed mid-batch', () => {
  it('loses and duplicates nothing (PostgreSQL queue backend)', async () => {
    const db = await createTestDatabase();
    cleanups.push(db.drop);
    const env = { DATABASE_URL: db.url, KEY_PEPPER: TEST_PEPPER, REDIS_URL: '', WORKER_CONCURRENCY: '2' };
    const web = await startServerProcess('web', env);
    running.push(web);
    const { key, workspaceId } = await signUpOverHttp(web.url);

    const total = 600;
    const items = Array.from({ length: total }, (_, i) => ({
      title: `Finding ${i}`,
      severity: 'MEDIUM',
      description: `Outdated package ${i}`,
    }));
    const accepted = await fetch(`${web.url}/api/v1/triage/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ items }),
    });
    expect(accepted.status).toBe(202);
    const { batchId } = (await accepted.json()) as { batchId: string };
    const status = async () =>
      (await (
        await fetch(`${web.url}/api/v1/triage/batch/${batchId}?limit=1`, { headers: { 'x-api-key': key } })
      ).json()) as {
        status: string;
        completed: number;
        failed: number;
      };

    const first = await startServerProcess('worker', env);
    running.push(first);
    for (let i = 0; i < 600 && (await status()).completed < 40; i++)
      await new Promise((r) => setTimeout(r, 50));
    await first.stop('SIGKILL');
    const atKill = await status();
    expect(atKill.completed).toBeGreaterThan(0);
    expect(atKill.completed).toBeLessThan(total);

    const second = await startServerProcess('worker', env);
    running.push(second);
    let last = await status();
    for (let i = 0; i < 900 && last.status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      last = await status();
    }
    expect(last).toMatchObject({ status: 'completed', completed: total, failed: 0 });

    const c = new pg.Client(db.url);
    await c.connect();
    try {
      const results = await c.query(
        `SELECT count(*)::int AS n, count(DISTINCT response->>'triagedAt')::int AS d FROM triage_results WHERE batch_id = $1`,
        [batchId],
      );
      expect(results.rows[0].n).toBe(total);
      const ledger = await c.query(
        `SELECT count(*) FILTER (WHERE ai_call)::int AS calls, count(DISTINCT request_id)::int AS requests FROM usage_ledger WHERE request_id LIKE $1`,
        [`batch:${batchId}:%`],
      );
      expect(ledger.rows[0]).toEqual({ calls: total, requests: total });
      const quota = await c.query(`SELECT used, reserved FROM ai_call_quota WHERE workspace_id = $1`, [
        workspaceId,
      ]);
      expect(quota.rows[0]).toEqual({ used: total, reserved: 0 });
    } finally {
      await c.end();
    }
  }, 300_000);
});
