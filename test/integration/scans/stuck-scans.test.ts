import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, readFileSync } from 'node:fs';
import path from 'node:path';
import { UnrecoverableError } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueBackends } from '../../helpers/db.js';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { parseScanToArray, type Finding } from '../../../src/parsers/index.js';
import { insertScan, startParsing } from '../../../src/domain/scans/scan-store.js';
import { completeScan } from '../../../src/domain/scans/ingest-store.js';
import { openScanWriter } from '../../../src/domain/scans/scan-writer.js';
import {
  INGEST_ABANDONED,
  INGEST_GAVE_UP,
  INGEST_STALLED,
  discardRowsOfFailedScan,
  failScanForGood,
} from '../../../src/domain/scans/scan-failure.js';
import { enqueueScanIngest } from '../../../src/jobs/scan-ingest.js';
import { runMaintenance } from '../../../src/domain/maintenance.js';
import { SCAN_INGEST_QUEUE } from '../../../src/jobs/scan-ingest.js';
import { isFinalFailure, type JobStateProbe } from '../../../src/lib/job-state.js';

const FIXTURES = path.resolve('test/fixtures/scans/openvas');
const SCAN = readFileSync(path.join(FIXTURES, 'one_vuln.xml'));
const STALLED_OUT = 'job stalled more than allowable limit';
const HOUR = 3_600_000;

const backends = queueBackends('scans/stuck-scans');

describe('isFinalFailure', () => {
  const job = (attemptsMade: number, attempts: number | undefined, finishedOn?: number) => ({
    attemptsMade,
    opts: attempts === undefined ? {} : { attempts },
    finishedOn,
  });
  it.each([
    ['an error with attempts left', job(1, 5), new Error('db down'), false],
    ['an error on the last attempt', job(5, 5), new Error('db down'), true],
    [
      'a job that stalled out (BullMQ fails it unrecoverably without running it)',
      job(0, 5),
      new UnrecoverableError(STALLED_OUT),
      true,
    ],
    [
      'an UnrecoverableError that crossed a boundary as a plain object',
      job(1, 5),
      { name: 'UnrecoverableError', message: 'x' },
      true,
    ],
    [
      'a job BullMQ moved to failed for another reason (finishedOn set)',
      job(1, 5, Date.now()),
      new Error('x'),
      true,
    ],
    ['a job without attempts after its one attempt', job(1, undefined), new Error('x'), true],
  ])('%s: %s', (_what, j, err, final) => {
    expect(isFinalFailure(j as never, err)).toBe(final);
  });
});

describe('ending scans', () => {
  let t: ScanTestApp;
  let workspaceId: string;
  let findings: Finding[];

  beforeAll(async () => {
    t = await startScanApp({ worker: false });
    ({ workspaceId } = await signUp(t.app));
    findings = (await parseScanToArray(createReadStream(path.join(FIXTURES, 'many_vuln.xml')))).findings;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A stored scan, `queued` or claimed (`parsing`, with staged findings), created `ageMs` ago. */
  async function storedScan(opts: {
    status: 'queued' | 'parsing';
    ageMs?: number;
    staged?: boolean;
  }): Promise<string> {
    const id = randomUUID();
    const key = `${workspaceId}/${id}`;
    const write = await t.storage.create(key);
    write.stream.end(SCAN);
    await once(write.stream, 'finish');
    await write.commit();
    await insertScan(t.infra.pool, {
      id,
      workspaceId,
      keyId: null,
      name: null,
      format: 'openvas',
      bytes: SCAN.length,
      sha256: 'x',
      storagePath: key,
      contentEncoding: null,
      idempotencyKey: null,
      asset: { name: null, environment: null, criticality: null, internetExposed: null },
    });
    if (opts.status === 'parsing') await startParsing(t.infra.pool, id);
    if (opts.staged) await stage(id);
    if (opts.ageMs) {
      await t.infra.pool.query(
        `UPDATE scans SET created_at = now() - make_interval(secs => $2::double precision / 1000) WHERE id = $1`,
        [id, opts.ageMs],
      );
    }
    return id;
  }

  async function stage(id: string): Promise<void> {
    const writer = await openScanWriter(t.infra.pool, { id, workspaceId });
    try {
      await writer.write(findings.slice(0, 10), null);
      await writer.flush();
    } finally {
      await writer.close();
    }
  }

  const row = async (id: string) =>
    (
      await t.infra.pool.query<{ status: string; error: unknown; findings_count: number; stored: number }>(
        `SELECT status, error, findings_count, (SELECT count(*) FROM findings WHERE scan_id = $1)::int AS stored FROM scans WHERE id = $1`,
        [id],
      )
    ).rows[0]!;
  const fileOf = (id: string) => t.storage.size(`${workspaceId}/${id}`);
  const deps = () => ({ pool: t.infra.pool, storage: t.storage });

  it('fails a parsing scan once: staged rows and the stored file go, and a later failure keeps the first reason', async () => {
    const id = await storedScan({ status: 'parsing', staged: true });
    expect((await row(id)).stored).toBe(10);

    expect(await failScanForGood(deps(), id, INGEST_STALLED)).toBe(true);
    expect(await row(id)).toEqual({ status: 'failed', error: INGEST_STALLED, findings_count: 0, stored: 0 });
    expect(await fileOf(id)).toBeNull();

    expect(await failScanForGood(deps(), id, INGEST_GAVE_UP)).toBe(false);
    expect((await row(id)).error).toEqual(INGEST_STALLED);
  });

  it('never overrides a completion, and racing one has exactly one winner', async () => {
    const done = await storedScan({ status: 'parsing', staged: true });
    expect(await completeScan(t.infra.pool, done, { bytes: SCAN.length, notes: [] })).toBe(true);
    expect(await failScanForGood(deps(), done, INGEST_GAVE_UP)).toBe(false);
    expect(await row(done)).toMatchObject({
      status: 'completed',
      error: null,
      findings_count: 10,
      stored: 10,
    });

    for (let i = 0; i < 5; i++) {
      const id = await storedScan({ status: 'parsing', staged: true });
      const [completed, failed] = await Promise.all([
        completeScan(t.infra.pool, id, { bytes: SCAN.length, notes: [] }),
        failScanForGood(deps(), id, INGEST_GAVE_UP),
      ]);
      expect(completed !== failed).toBe(true);
      expect(await row(id)).toMatchObject(
        completed
          ? { status: 'completed', findings_count: 10, stored: 10 }
          : { status: 'failed', error: INGEST_GAVE_UP, stored: 0 },
      );
    }
  });

  it('drops rows a late attempt wrote after its scan failed, and keeps those of a completed scan', async () => {
    const failed = await storedScan({ status: 'parsing' });
    await failScanForGood(deps(), failed, INGEST_STALLED);
    await stage(failed);
    await discardRowsOfFailedScan(t.infra.pool, failed);
    expect((await row(failed)).stored).toBe(0);

    const completed = await storedScan({ status: 'parsing', staged: true });
    await completeScan(t.infra.pool, completed, { bytes: SCAN.length, notes: [] });
    await discardRowsOfFailedScan(t.infra.pool, completed);
    expect((await row(completed)).stored).toBe(10);
  });

  it('the maintenance sweep fails old scans whose job is gone or failed, and never one whose job is waiting or active', async () => {
    const real = t.infra.queues.queue(SCAN_INGEST_QUEUE);
    const forced = new Map<string, string>();
    const jobs: JobStateProbe = { getJobState: async (id) => forced.get(id) ?? real.getJobState(id) };

    const lost = await storedScan({ status: 'queued', ageMs: HOUR });
    const failedJob = await storedScan({ status: 'parsing', staged: true, ageMs: HOUR });
    forced.set(failedJob, 'failed');
    const backlog = await storedScan({ status: 'queued', ageMs: HOUR });
    await enqueueScanIngest(t.infra.queues, { scanId: backlog, workspaceId });
    const parsing = await storedScan({ status: 'parsing', staged: true, ageMs: 3 * HOUR });
    forced.set(parsing, 'active');
    const fresh = await storedScan({ status: 'queued', ageMs: 60_000 });

    expect(await real.getJobState(lost)).toBe('unknown');
    expect(await real.getJobState(backlog)).toBe('waiting');

    const sweep = () =>
      runMaintenance({
        db: t.infra.pool,
        quota: t.deps.quota,
        bus: t.infra.bus,
        clock: t.clock,
        scans: { pool: t.infra.pool, storage: t.storage, jobs, stuckAfterMs: 15 * 60_000 },
      });
    expect((await sweep()).scansFailed).toBe(2);

    expect(await row(lost)).toMatchObject({ status: 'failed', error: INGEST_ABANDONED });
    expect(await row(failedJob)).toMatchObject({ status: 'failed', error: INGEST_GAVE_UP, stored: 0 });
    expect(await fileOf(lost)).toBeNull();
    expect(await fileOf(failedJob)).toBeNull();
    for (const id of [backlog, parsing, fresh]) expect(await fileOf(id)).toBe(SCAN.length);
    expect((await row(backlog)).status).toBe('queued');
    expect(await row(parsing)).toMatchObject({ status: 'parsing', stored: 10 });
    expect((await row(fresh)).status).toBe('queued');

    // Idempotent; and with no sweep dependencies the step is skipped.
    expect((await sweep()).scansFailed).toBe(0);
    const without = await runMaintenance({
      db: t.infra.pool,
      quota: t.deps.quota,
      bus: t.infra.bus,
      clock: t.clock,
    });
    expect(without.scansFailed).toBe(0);
  });
});

describe.each(backends)('a job that stalled out on $name', ({ name, redisUrl }) => {
  let t: ScanTestApp;
  afterAll(async () => {
    await t?.close();
  });

  it.skipIf(name === 'Redis' && !redisUrl)(
    'fails its scan with a reason and removes the file, though BullMQ fails the job as unrecoverable without an attempt',
    async () => {
      const namespace = `stall${randomUUID().slice(0, 8)}`;
      t = await startScanApp({ redisUrl, worker: false, queueNamespace: namespace });
      const { key, workspaceId } = await signUp(t.app);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/pipeline/scan',
        headers: { 'x-api-key': key, 'content-type': 'application/xml' },
        payload: SCAN,
      });
      expect(res.statusCode).toBe(202);
      const scanId = res.json().scanId as string;
      // A worker claimed the scan and crashed; then what BullMQ's stalled checker does to a job
      // that stalled more than maxStalledCount times: back to waiting, marked to fail.
      await startParsing(t.infra.pool, scanId);
      if (redisUrl) {
        await t.infra.redis!.hset(`${namespace}:scan-ingest:${scanId}`, 'defa', STALLED_OUT);
      } else {
        const marked = await t.infra.pool.query(
          `UPDATE "${namespace}".job SET deferred_failure = $2 WHERE queue = 'scan-ingest' AND id = $1`,
          [scanId, STALLED_OUT],
        );
        expect(marked.rowCount).toBe(1);
      }

      t.startWorker();
      const done = await waitForScan(t.app, key, scanId);
      expect(done).toMatchObject({ status: 'failed', error: INGEST_STALLED, counts: { findings: 0 } });
      expect(await t.storage.size(`${workspaceId}/${scanId}`)).toBeNull();
      expect(await t.infra.queues.queue(SCAN_INGEST_QUEUE).getJobState(scanId)).toBe('failed');
    },
  );
});
