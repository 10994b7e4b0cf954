import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signUpWorkflowManager, TEST_PEPPER } from '../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../helpers/scan-app.js';
import { startScanWorkerProcess, type ScanWorkerProcess } from '../helpers/scan-worker-process.js';
import { DELIVERY_QUEUE } from '../../src/jobs/workflow-delivery.js';

/**
 * docs/workflows.md#when-deliveries-happen: a scan's `case.created` deliveries are part of its
 * completion transaction. A real worker process is killed (SIGKILL) while its completion waits on
 * the workflow outbox, which the test holds. Whatever the kill interrupted, no case the scan
 * created is left without its delivery: the restarted worker completes the scan and every new
 * case has exactly one `case.created` delivery, queued.
 */
const DIR = path.resolve('test/fixtures/scans/rescan');

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('kill -9 of the worker while a scan records its workflow deliveries', () => {
  it('loses no case.created delivery', async () => {
    const namespace = `created${Date.now().toString(36)}`;
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
    const db = t.infra.pool;

    const holder = await db.connect();
    cleanups.push(async () => holder.release());
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE workflow_deliveries IN SHARE MODE');
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/pipeline/scan',
      headers: { 'x-api-key': owner.key, 'content-type': 'application/xml' },
      payload: readFileSync(path.join(DIR, 'nessus-first.nessus')),
    });
    expect(res.statusCode).toBe(202);
    const scanId = (res.json() as { scanId: string }).scanId;
    const blockedOnOutbox = async () =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks
            WHERE locktype = 'relation' AND NOT granted AND relation = 'workflow_deliveries'::regclass`,
        )
      ).rows[0]!.n;
    for (let i = 0; (await blockedOnOutbox()) === 0; i++) {
      if (i > 1500) throw new Error(`the scan never reached the outbox:\n${worker.output()}`);
      await sleep(20);
    }
    await worker.kill('SIGKILL');
    await holder.query('COMMIT');
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

    worker = await startScanWorkerProcess(env);
    const done = await waitForScan(t.app, owner.key, scanId, 120_000);
    expect(done, worker.output()).toMatchObject({ status: 'completed', counts: { new: 12 } });
    const { rows } = await db.query<{ cases: number; deliveries: number; per_case: number }>(
      `SELECT (SELECT count(*) FROM cases WHERE workspace_id = $1)::int AS cases,
              (SELECT count(*) FROM workflow_deliveries WHERE workspace_id = $1 AND event = 'case.created')::int AS deliveries,
              (SELECT count(DISTINCT case_id) FROM workflow_deliveries WHERE workspace_id = $1 AND event = 'case.created')::int AS per_case`,
      [owner.workspaceId],
    );
    expect(rows[0]).toEqual({ cases: 12, deliveries: 12, per_case: 12 });
    const { rows: ids } = await db.query<{ id: string }>(
      `SELECT id FROM workflow_deliveries WHERE workspace_id = $1 AND event = 'case.created'`,
      [owner.workspaceId],
    );
    const queue = t.infra.queues.queue(DELIVERY_QUEUE);
    // Queued by the worker just after the commit that the scan's status shows.
    for (const { id } of ids)
      for (let i = 0; (await queue.getJobState(id)) === 'unknown'; i++) {
        if (i > 1500) throw new Error(`delivery ${id} never queued:\n${worker.output()}`);
        await sleep(20);
      }
    await worker.kill('SIGTERM');
  }, 240_000);
});
