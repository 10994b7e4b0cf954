import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signUpWorkflowManager, TEST_PEPPER } from '../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../helpers/scan-app.js';
import { startScanWorkerProcess, type ScanWorkerProcess } from '../helpers/scan-worker-process.js';

/**
 * docs/ingestion.md#rescans: the resolutions of a rescan are part of its completion transaction.
 * A real worker process is killed (SIGKILL) while its completion has resolved the cases but not
 * committed (it waits on the workflow outbox, which the test holds): the scope is as before, no
 * history row and no delivery is left; the restarted worker completes the scan once, with the
 * right counts, history and deliveries.
 */
const DIR = path.resolve('test/fixtures/scans/rescan');

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('kill -9 of the worker mid-completion of a rescan', () => {
  it('leaves the scope unchanged; the retried job resolves it once', async () => {
    const namespace = `rescan${Date.now().toString(36)}`;
    const t: ScanTestApp = await startScanApp({ worker: false, queueNamespace: namespace });
    cleanups.push(() => t.close());
    const owner = await signUpWorkflowManager(t.app);
    const wf = await t.app.inject({
      method: 'POST',
      url: '/api/v1/workflows',
      headers: { 'x-api-key': owner.key, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'all', target: { kind: 'webhook', url: 'https://hooks.acme.test/v' } }),
    });
    expect(wf.statusCode).toBe(201);
    const env = {
      DATABASE_URL: t.databaseUrl,
      KEY_PEPPER: TEST_PEPPER,
      REDIS_URL: '',
      SCAN_STORAGE_DIR: t.storageDir,
      PARSER_THREADS: '1',
      QUEUE_NAMESPACE: namespace,
      SCAN_LOCK_MS: '2000',
    };
    let worker: ScanWorkerProcess = await startScanWorkerProcess(env);
    cleanups.push(() => worker.kill());
    const upload = async (name: string) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/pipeline/scan',
        headers: { 'x-api-key': owner.key, 'content-type': 'application/xml' },
        payload: readFileSync(path.join(DIR, name)),
      });
      expect(res.statusCode).toBe(202);
      return (res.json() as { scanId: string }).scanId;
    };
    const db = t.infra.pool;
    const openCases = async () =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM cases WHERE workspace_id = $1 AND status = 'open'`,
          [owner.workspaceId],
        )
      ).rows[0]!.n;

    const first = await waitForScan(t.app, owner.key, await upload('nessus-first.nessus'), 60_000);
    expect(first.status, worker.output()).toBe('completed');
    expect(await openCases()).toBe(12);

    // Hold the outbox: the rescan's completion resolves its cases, then waits to record deliveries.
    const holder = await db.connect();
    cleanups.push(async () => holder.release());
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE workflow_deliveries IN SHARE MODE');
    const rescan = await upload('nessus-second.nessus');
    const blockedOnOutbox = async () =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks
            WHERE locktype = 'relation' AND NOT granted AND relation = 'workflow_deliveries'::regclass`,
        )
      ).rows[0]!.n;
    for (let i = 0; (await blockedOnOutbox()) === 0; i++) {
      if (i > 1500) throw new Error(`the completion never reached the outbox:\n${worker.output()}`);
      await sleep(20);
    }
    await worker.kill('SIGKILL');
    await holder.query('COMMIT');
    // The killed worker's backend finishes its statement, finds its client gone and rolls back.
    for (let i = 0; ; i++) {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
            AND backend_type = 'client backend' AND query ILIKE '%workflow_deliveries%'`,
      );
      if (rows[0]!.n === 0) break;
      if (i > 1500) throw new Error('the killed worker’s transaction never ended');
      await sleep(20);
    }
    const mid = await db.query<{ status: string; resolved: number }>(
      `SELECT status, resolved_cases AS resolved FROM scans WHERE id = $1`,
      [rescan],
    );
    expect(mid.rows[0]).toEqual({ status: 'parsing', resolved: 0 });
    expect(await openCases()).toBe(12);
    const leftovers = await db.query<{ history: number; deliveries: number }>(
      `SELECT (SELECT count(*) FROM case_status_history WHERE actor = $1)::int AS history,
              (SELECT count(*) FROM workflow_deliveries WHERE event = 'case.status_changed')::int AS deliveries`,
      [`scan:${rescan}`],
    );
    expect(leftovers.rows[0]).toEqual({ history: 0, deliveries: 0 });

    worker = await startScanWorkerProcess(env);
    const done = await waitForScan(t.app, owner.key, rescan, 120_000);
    expect(done, worker.output()).toMatchObject({
      status: 'completed',
      counts: { findings: 7, resolved: 5 },
    });
    expect(await openCases()).toBe(7);
    const after = await db.query<{ history: number; deliveries: number }>(
      `SELECT (SELECT count(*) FROM case_status_history WHERE actor = $1 AND reason = 'not_seen')::int AS history,
              (SELECT count(*) FROM workflow_deliveries WHERE event = 'case.status_changed')::int AS deliveries`,
      [`scan:${rescan}`],
    );
    expect(after.rows[0]).toEqual({ history: 5, deliveries: 5 });
    await worker.kill('SIGTERM');
  }, 240_000);
});
