import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testS3Env } from '../../helpers/db.js';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { startTcpProxy, type TcpProxy } from '../../faults/tcp-proxy.js';
import type { StoredEntry } from '../../../src/domain/scans/scan-storage.js';
import { EXPORT_QUEUE, exportProcessor, type ExportPayload } from '../../../src/jobs/export-job.js';

/*
 * The S3 driver end to end (docs/deploy.md#object-storage): an upload streams into a bucket of a
 * real S3 server (OpenStack Swift's s3api), the worker parses it from there, an export job writes
 * its file there and its signed link serves it; with the server unreachable, uploads are 503
 * with Retry-After and nothing is stored.
 */

const FIXTURES = path.resolve('test/fixtures/scans');
const nessus = readFileSync(path.join(FIXTURES, 'nessus/nessus_v_unknown.xml'));
const sarif = readFileSync(path.join(FIXTURES, 'sarif/bash-report.sarif'));
const s3Env = testS3Env('object storage end to end');

describe('scans and exports on S3', () => {
  let t: ScanTestApp;
  let key: string;
  let proxy: TcpProxy;
  let exportWorker: { close(): Promise<void> } | undefined;

  beforeAll(async () => {
    if (!s3Env) return;
    const endpoint = new URL(s3Env.S3_ENDPOINT!);
    // Through a proxy the test can cut, as a network partition or a storage outage would.
    proxy = await startTcpProxy({ host: endpoint.hostname, port: Number(endpoint.port) });
    t = await startScanApp({ env: { ...s3Env, S3_ENDPOINT: `http://127.0.0.1:${proxy.port}` } });
    exportWorker = t.infra.queues.worker<ExportPayload, void>(EXPORT_QUEUE, exportProcessor(t.deps.exports));
    key = (await signUp(t.app)).key;
  }, 60_000);
  afterAll(async () => {
    await exportWorker?.close();
    await t?.close();
    await proxy?.close();
  });

  const objects = async (): Promise<StoredEntry[]> => {
    const out: StoredEntry[] = [];
    for await (const e of t.storage.entries()) out.push(e);
    return out;
  };
  const upload = (body: Buffer, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/api/pipeline/scan',
      headers: { 'x-api-key': key, 'content-type': 'application/xml', ...headers },
      payload: body,
    });

  it.skipIf(!s3Env)(
    'parses uploads streamed from the bucket, plain and gzip, and keeps their objects for the retention',
    async () => {
      expect(t.storageDir).toBeTruthy();
      const plain = await upload(nessus);
      expect(plain.statusCode, plain.body).toBe(202);
      const zipped = await upload(gzipSync(sarif), {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      });
      expect(zipped.statusCode, zipped.body).toBe(202);
      const a = await waitForScan(t.app, key, (plain.json() as { scanId: string }).scanId);
      const b = await waitForScan(t.app, key, (zipped.json() as { scanId: string }).scanId);
      expect(a).toMatchObject({
        status: 'completed',
        format: 'nessus',
        bytes: nessus.length,
        counts: { findings: 296 },
      });
      expect(b).toMatchObject({ status: 'completed', format: 'sarif', bytes: sarif.length });
      // A parsed scan keeps its raw file until its workspace's retention removes it
      // (docs/operations.md#retention): the bucket holds exactly the two scans' objects.
      expect((await objects()).map((e) => e.ownerId).sort()).toEqual(
        [(plain.json() as { scanId: string }).scanId, (zipped.json() as { scanId: string }).scanId].sort(),
      );
    },
  );

  it.skipIf(!s3Env)(
    'writes an export job into the bucket and serves it through its signed link',
    async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/exports',
        headers: { 'x-api-key': key },
        payload: { format: 'jsonl' },
      });
      expect(res.statusCode, res.body).toBe(202);
      const id = (res.json() as { id: string }).id;
      let done: { status: string; downloadUrl: string; rowsWritten: number } | undefined;
      for (let i = 0; i < 300; i++) {
        done = (
          await t.app.inject({ method: 'GET', url: `/api/v1/exports/${id}`, headers: { 'x-api-key': key } })
        ).json();
        if (done!.status === 'completed' || done!.status === 'failed') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(done).toMatchObject({ status: 'completed' });
      expect((await objects()).map((e) => e.ownerId)).toContain(id);
      const url = new URL(done!.downloadUrl);
      const file = await t.app.inject({ method: 'GET', url: url.pathname + url.search });
      expect(file.statusCode).toBe(200);
      const direct = await t.app.inject({
        method: 'GET',
        url: '/api/v1/exports/cases?format=jsonl',
        headers: { 'x-api-key': key },
      });
      const ids = (body: string) =>
        body
          .split('\n')
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as { id: string }).id)
          .sort();
      expect(ids(file.body)).toEqual(ids(direct.body));
      expect(ids(file.body)).toHaveLength(done!.rowsWritten);
    },
  );

  it.skipIf(!s3Env)(
    'answers 503 with Retry-After while the bucket cannot be reached, and stores nothing',
    async () => {
      const scans = async () =>
        (await t.infra.pool.query<{ n: number }>('select count(*)::int as n from scans')).rows[0]!.n;
      const before = await scans();
      await proxy.refuse();
      proxy.cut();
      try {
        const res = await upload(nessus);
        expect(res.statusCode, res.body).toBe(503);
        expect(res.headers['retry-after']).toBe('5');
        expect(res.headers['content-type']).toContain('application/problem+json');
        expect(res.json()).toMatchObject({ status: 503, code: 'overloaded' });
        expect(res.body).not.toMatch(/testing|test:tester|127\.0\.0\.1/);
        const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
        expect(ready.statusCode).toBe(503);
      } finally {
        await proxy.open();
      }
      expect(await scans()).toBe(before);
      const again = await upload(nessus);
      expect(again.statusCode).toBe(202);
      expect((await waitForScan(t.app, key, (again.json() as { scanId: string }).scanId)).status).toBe(
        'completed',
      );
    },
  );
});
