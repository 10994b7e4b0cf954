import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { queueBackends } from '../../helpers/db.js';
import { signUp, TEST_PEPPER } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, writeLargeNessus, type ScanTestApp } from '../../helpers/scan-app.js';
import { startScanWorkerProcess, type ScanWorkerProcess } from '../../helpers/scan-worker-process.js';

const backends = queueBackends('scans/crash-safety');

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

async function sleep(ms: number) {
  await new Promise((r) => setTimeout(r, ms));
}

describe.each(backends)('crash safety on $name', ({ name, redisUrl }) => {
  it.skipIf(name === 'Redis' && !redisUrl)(
    'a worker killed mid-parse: after a restart the scan completes with exactly the right counts',
    async () => {
      const namespace = `crash${Date.now().toString(36)}`;
      const t: ScanTestApp = await startScanApp({ redisUrl, worker: false, queueNamespace: namespace });
      cleanups.push(() => t.close());
      const { key } = await signUp(t.app);
      const file = path.join(t.storageDir, 'large.nessus');
      const items = await writeLargeNessus(file, 40 * 1024 ** 2);
      const bytes = (await stat(file)).size;

      const env = {
        DATABASE_URL: t.databaseUrl,
        KEY_PEPPER: TEST_PEPPER,
        REDIS_URL: redisUrl ?? '',
        SCAN_STORAGE_DIR: t.storageDir,
        PARSER_THREADS: '1',
        QUEUE_NAMESPACE: namespace,
        SCAN_LOCK_MS: '2000',
      };
      let worker: ScanWorkerProcess = await startScanWorkerProcess(env);
      cleanups.push(() => worker.kill());

      const res = await t.app.inject({
        method: 'POST',
        url: '/api/pipeline/scan',
        headers: { 'x-api-key': key, 'content-type': 'application/xml', 'content-length': String(bytes) },
        payload: createReadStream(file),
      });
      expect(res.statusCode).toBe(202);
      const scanId = res.json().scanId as string;

      // Kill it once a good part, but not all, of the file is stored.
      let staged = 0;
      for (let i = 0; i < 600; i++) {
        const r = await t.infra.pool.query(`SELECT count(*)::int AS n FROM findings WHERE scan_id = $1`, [
          scanId,
        ]);
        staged = r.rows[0].n;
        if (staged >= items / 5) break;
        await sleep(50);
      }
      await worker.kill('SIGKILL');
      const mid = await t.infra.pool.query(
        `SELECT status, bytes_parsed::int AS parsed, findings_count FROM scans WHERE id = $1`,
        [scanId],
      );
      expect(mid.rows[0].status, worker.output()).toBe('parsing');
      // Progress is recorded per batch: findings so far and the bytes the parser thread has read.
      expect(mid.rows[0].findings_count).toBeGreaterThan(0);
      expect(mid.rows[0].parsed).toBeGreaterThan(0);
      expect(mid.rows[0].parsed).toBeLessThan(bytes);
      expect(staged).toBeGreaterThan(0);
      expect(staged).toBeLessThan(items);
      // Nothing of a scan in progress is visible to readers.
      const visible = await t.app.inject({
        method: 'GET',
        url: `/api/v1/findings?scan=${scanId}`,
        headers: { 'x-api-key': key },
      });
      expect(visible.json().data).toEqual([]);

      worker = await startScanWorkerProcess(env);
      const done = await waitForScan(t.app, key, scanId, 120_000);
      expect(done, worker.output()).toMatchObject({
        status: 'completed',
        bytes,
        bytesParsed: bytes,
        counts: { findings: items, new: items, duplicate: 0 },
      });
      const rows = await t.infra.pool.query(
        `SELECT (SELECT count(*) FROM findings WHERE scan_id = $1)::int AS findings,
                (SELECT count(DISTINCT record_index) FROM findings WHERE scan_id = $1)::int AS distinct_records,
                (SELECT count(*) FROM findings WHERE scan_id = $1 AND (raw_excerpt <> '' OR scanner_output IS NOT NULL))::int AS evidence,
                (SELECT count(*) FROM cases)::int AS cases,
                (SELECT coalesce(sum(sightings), 0) FROM cases)::int AS sightings`,
        [scanId],
      );
      expect(rows.rows[0]).toEqual({
        findings: items,
        distinct_records: items,
        evidence: items,
        cases: items,
        sightings: items,
      });
      await worker.kill('SIGTERM');
    },
    240_000,
  );
});
