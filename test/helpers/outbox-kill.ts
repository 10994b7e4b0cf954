import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { signUpWorkflowManager, TEST_PEPPER } from './test-app.js';
import { startScanApp, type ScanTestApp } from './scan-app.js';
import { startScanWorkerProcess, type ScanWorkerProcess } from './scan-worker-process.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A scan app with one webhook workflow and a real worker process, for the tests that kill the
 * worker (SIGKILL) while a scan's completion transaction waits on the workflow outbox, which the
 * test holds (docs/workflows.md#when-deliveries-happen: a completion records its deliveries).
 */
export interface OutboxKillRig {
  t: ScanTestApp;
  owner: Awaited<ReturnType<typeof signUpWorkflowManager>>;
  /** The worker process running now (a new one after {@link OutboxKillRig.restartWorker}). */
  worker(): ScanWorkerProcess;
  /** Uploads a file of `dir` as a scan; its id. */
  upload(file: string): Promise<string>;
  /** Takes a SHARE lock on the outbox in an open transaction: a completion then waits there. */
  holdOutbox(): Promise<void>;
  /** Returns once a completion waits on the held outbox. */
  waitBlockedOnOutbox(): Promise<void>;
  /** SIGKILL of the worker, then the outbox released, then its backend's transaction ended. */
  killWorkerAndReleaseOutbox(): Promise<void>;
  restartWorker(): Promise<void>;
  close(): Promise<void>;
}

export async function startOutboxKillRig(namespacePrefix: string, dir: string): Promise<OutboxKillRig> {
  const namespace = `${namespacePrefix}${Date.now().toString(36)}`;
  const cleanups: (() => Promise<unknown>)[] = [];
  const t = await startScanApp({ worker: false, queueNamespace: namespace });
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
  let worker = await startScanWorkerProcess(env);
  cleanups.push(() => worker.kill());
  const db = t.infra.pool;
  const holder = await db.connect();
  cleanups.push(async () => holder.release());

  return {
    t,
    owner,
    worker: () => worker,
    async upload(file) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/pipeline/scan',
        headers: { 'x-api-key': owner.key, 'content-type': 'application/xml' },
        payload: readFileSync(path.join(dir, file)),
      });
      expect(res.statusCode).toBe(202);
      return (res.json() as { scanId: string }).scanId;
    },
    async holdOutbox() {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE workflow_deliveries IN SHARE MODE');
    },
    async waitBlockedOnOutbox() {
      for (let i = 0; ; i++) {
        const { rows } = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks
            WHERE locktype = 'relation' AND NOT granted AND relation = 'workflow_deliveries'::regclass`,
        );
        if (rows[0]!.n > 0) return;
        if (i > 1500) throw new Error(`the completion never reached the outbox:\n${worker.output()}`);
        await sleep(20);
      }
    },
    async killWorkerAndReleaseOutbox() {
      await worker.kill('SIGKILL');
      await holder.query('COMMIT');
      // The killed worker's backend finishes its statement, finds its client gone and rolls back.
      for (let i = 0; ; i++) {
        const { rows } = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
              AND backend_type = 'client backend' AND query ILIKE '%workflow_deliveries%'`,
        );
        if (rows[0]!.n === 0) return;
        if (i > 1500) throw new Error('the killed worker’s transaction never ended');
        await sleep(20);
      }
    },
    async restartWorker() {
      worker = await startScanWorkerProcess(env);
    },
    async close() {
      for (const c of cleanups.reverse()) await c().catch(() => undefined);
    },
  };
}
