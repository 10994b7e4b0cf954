import { randomBytes } from 'node:crypto';
import { createReadStream, readFileSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import {
  DeleteBucketCommand,
  DeleteObjectCommand,
  AbortMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Queue } from 'bullmq';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Client } from '../../../src/app/object-storage.js';
import { createTestDatabase, testRedisUrl, testS3Env } from '../../helpers/db.js';
import { eventually, multipartBody, openUpload, writeLargeNessus } from '../../helpers/scan-app.js';
import {
  signUpOverHttp,
  startServerProcess,
  type HttpSignup,
  type ServerProcess,
} from '../../helpers/server-process.js';
import { TEST_PEPPER } from '../../helpers/test-app.js';

/*
 * docs/deploy.md#what-ci-proves: a deployment whose processes share no disk. Two `web` and two
 * `worker` processes, each with an empty DATA_DIR and SCAN_STORAGE_DIR of its own, share one
 * PostgreSQL database, one Redis and a fresh S3 bucket. Uploads on either web process are parsed
 * by either worker, an export rendered by a worker downloads through the other web process, a
 * worker killed mid-ingest hands its scan to the other worker (parsed exactly once), and a web
 * process killed mid-upload leaves a multipart upload that the next maintenance run aborts.
 */

const FIXTURES = path.resolve('test/fixtures/scans');
const nessus = readFileSync(path.join(FIXTURES, 'nessus/nessus_v_unknown.xml'));
const sarif = readFileSync(path.join(FIXTURES, 'sarif/bash-report.sarif'));
const s3Env = testS3Env('no shared disk');
const redisUrl = testRedisUrl();
if (!redisUrl) console.warn('[no shared disk] Redis not reachable: the suite is SKIPPED.');
/** The longest upload; the maintenance run aborts multipart uploads begun longer ago than this and its margin. */
const BODY_TIMEOUT_MS = 15_000;

interface Deployment {
  webA: ServerProcess;
  webB: ServerProcess;
  workers: ServerProcess[];
  db: pg.Pool;
  s3: S3Client;
  bucket: string;
  redisPrefix: string;
  /** Every process's DATA_DIR and SCAN_STORAGE_DIR. */
  dirs: string[];
}

describe.skipIf(!s3Env || !redisUrl)('a deployment with no shared disk', () => {
  let d: Deployment;
  let user: HttpSignup;
  /** The export job's id: its file stays in the bucket for its 24 hours. */
  let exportId = '';
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    const bucket = `vt-noshare-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
    const redisPrefix = `ns${Date.now().toString(36)}`;
    const common = {
      ...s3Env!,
      S3_BUCKET: bucket,
      S3_PREFIX: '',
      DATABASE_URL: database.url,
      KEY_PEPPER: TEST_PEPPER,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: redisPrefix,
      PARSER_THREADS: '1',
      UPLOAD_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
    };
    const s3 = createS3Client({
      bucket,
      prefix: '',
      endpoint: s3Env!.S3_ENDPOINT!,
      region: s3Env!.S3_REGION!,
      credentials: {
        accessKeyId: s3Env!.S3_ACCESS_KEY_ID!,
        secretAccessKey: s3Env!.S3_SECRET_ACCESS_KEY!,
      },
      forcePathStyle: true,
    });
    const db = new pg.Pool({ connectionString: database.url, max: 2 });
    // An idle client ended by the server (the database dropped with FORCE, a backend killed) must
    // not become an uncaught exception of the test run; queries still fail as they should.
    db.on('error', () => undefined);
    cleanups.push(() => db.end());
    // Cleanups run in reverse: the processes stop first, then the bucket goes, then the database.
    cleanups.push(() => emptyAndDeleteBucket(s3, bucket).finally(() => s3.destroy()));
    const dirs: string[] = [];
    const own = async () => {
      const data = await mkdtemp(path.join(tmpdir(), 'noshare-data-'));
      const scans = await mkdtemp(path.join(tmpdir(), 'noshare-scans-'));
      dirs.push(data, scans);
      return { ...common, DATA_DIR: data, SCAN_STORAGE_DIR: scans };
    };
    cleanups.push(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));
    const started: ServerProcess[] = [];
    cleanups.push(() => Promise.all(started.map((p) => p.stop('SIGKILL'))));
    const start = async (role: 'web' | 'worker') => {
      const p = await startServerProcess(role, await own(), { startTimeoutMs: 120_000 });
      started.push(p);
      return p;
    };
    // The first web process migrates the database and creates the bucket; the others find both.
    const webA = await start('web');
    const [webB, w1, w2] = await Promise.all([start('web'), start('worker'), start('worker')]);
    d = { webA, webB, workers: [w1!, w2!], db, s3, bucket, redisPrefix, dirs };
    user = await signUpOverHttp(webA.url);
  }, 240_000);

  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch((err: unknown) => console.warn(err));
  }, 60_000);

  const api = (base: string, route: string, init: RequestInit = {}) =>
    fetch(`${base}${route}`, {
      ...init,
      headers: { 'x-api-key': user.key, ...(init.headers as Record<string, string>) },
    });
  const json = async <T>(res: Response | Promise<Response>): Promise<T> => (await (await res).json()) as T;

  async function scanEnds(base: string, scanId: string, timeoutMs: number) {
    type ScanView = { status: string; counts: { findings: number } };
    let scan: ScanView = { status: 'unknown', counts: { findings: 0 } };
    await eventually(async () => {
      scan = await json<ScanView>(api(base, `/api/v1/scans/${scanId}`));
      return scan.status === 'completed' || scan.status === 'failed';
    }, timeoutMs);
    return scan;
  }

  it('parses an API upload on one web process and a console upload on the other, and triages a case', async () => {
    const viaApi = await api(d.webA.url, '/api/pipeline/scan?name=api', {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: nessus,
    });
    expect(viaApi.status, await viaApi.clone().text()).toBe(202);
    const apiScan = (await viaApi.json()) as { scanId: string };

    const form = multipartBody([
      { name: 'file', filename: 'bash-report.sarif', contentType: 'application/json', body: sarif },
    ]);
    const viaConsole = await fetch(`${d.webB.url}/api/console/scans`, {
      method: 'POST',
      headers: { cookie: user.cookie, 'x-csrf-token': user.csrf, 'content-type': form.contentType },
      body: form.body,
    });
    expect(viaConsole.status, await viaConsole.clone().text()).toBe(202);
    const consoleScan = (await viaConsole.json()) as { id: string };

    // Each read through the web process that did not take the upload.
    expect(await scanEnds(d.webB.url, apiScan.scanId, 30_000)).toMatchObject({
      status: 'completed',
      format: 'nessus',
      counts: { findings: 296 },
    });
    const fromConsole = await scanEnds(d.webA.url, consoleScan.id, 30_000);
    expect(fromConsole).toMatchObject({ status: 'completed', format: 'sarif' });
    expect(fromConsole.counts.findings).toBeGreaterThan(0);

    const cases = await json<{ data: { id: string }[] }>(
      api(d.webB.url, `/api/v1/cases?scan=${consoleScan.id}&limit=1`),
    );
    expect(cases.data).toHaveLength(1);
    const triaged = await api(d.webB.url, `/api/v1/cases/${cases.data[0]!.id}/triage`, { method: 'POST' });
    expect(triaged.status, await triaged.clone().text()).toBe(200);
    expect(await triaged.json()).toMatchObject({ model: 'local:ssvc-2.0.3' });
    const apiCases = await json<{ data: unknown[] }>(
      api(d.webA.url, `/api/v1/cases?scan=${apiScan.scanId}&limit=5`),
    );
    expect(apiCases.data.length).toBeGreaterThan(0);
  }, 90_000);

  it('downloads an export job created on one web process through its link on the other', async () => {
    const created = await api(d.webA.url, '/api/v1/exports', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ format: 'jsonl' }),
    });
    expect(created.status, await created.clone().text()).toBe(202);
    const { id } = (await created.json()) as { id: string };
    exportId = id;
    let done: { status: string; downloadUrl: string; rowsWritten: number } | undefined;
    await eventually(async () => {
      done = await json(api(d.webA.url, `/api/v1/exports/${id}`));
      return done!.status === 'completed' || done!.status === 'failed';
    }, 30_000);
    expect(done).toMatchObject({ status: 'completed' });
    const link = new URL(done!.downloadUrl);
    // The link alone, no key: it is signed.
    const file = await fetch(`${d.webB.url}${link.pathname}${link.search}`);
    expect(file.status).toBe(200);
    const ids = (body: string) =>
      body
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { id: string }).id)
        .sort();
    const direct = await (await api(d.webB.url, '/api/v1/exports/cases?format=jsonl')).text();
    const downloaded = ids(await file.text());
    expect(downloaded).toHaveLength(done!.rowsWritten);
    expect(downloaded).toEqual(ids(direct));
  }, 60_000);

  // The two kills run side by side: the takeover waits out the dead worker's lock. The cut-off
  // upload begins once the big one is stored, so that it is the bucket's only multipart upload.
  let bigUploadEnded: () => void = () => undefined;
  const bigUploadDone = new Promise<void>((resolve) => (bigUploadEnded = resolve));
  it.concurrent(
    'hands the scan of a worker killed mid-ingest to the other worker, which parses it exactly once',
    async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'noshare-big-'));
      d.dirs.push(dir);
      const file = path.join(dir, 'big.nessus');
      const items = await writeLargeNessus(file, 40 * 1024 * 1024);
      const upload = await api(d.webA.url, '/api/pipeline/scan?name=big', {
        method: 'POST',
        headers: {
          'content-type': 'application/xml',
          'content-length': String(statSync(file).size),
        },
        body: Readable.toWeb(createReadStream(file)) as ReadableStream,
        duplex: 'half',
      } as RequestInit).finally(bigUploadEnded);
      expect(upload.status, await upload.clone().text()).toBe(202);
      const { scanId } = (await upload.json()) as { scanId: string };

      // Killed once it has written findings: the other worker must resume, not start over.
      const findingsOf = async () =>
        (
          await d.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM findings WHERE scan_id = $1`, [
            scanId,
          ])
        ).rows[0]!.n;
      expect(await eventually(async () => (await findingsOf()) > 0, 30_000)).toBe(true);
      const queue = new Queue('scan-ingest', { connection: { url: redisUrl }, prefix: d.redisPrefix });
      let owner: string | undefined;
      try {
        owner = (await queue.getJob(scanId))?.processedBy;
      } finally {
        await queue.close();
      }
      const victim = d.workers.find((w) => owner === `${hostname()}:${w.child.pid}`);
      expect(victim, `job processed by ${owner}`).toBeDefined();
      await victim!.stop('SIGKILL');
      const killedAt = await findingsOf();
      expect(killedAt).toBeLessThan(items);

      // The dead worker's lock expires within 30 s and the survivor's stall check runs every 30 s;
      // the rest is the parse of what was left, slower on a loaded machine.
      const scan = await scanEnds(d.webA.url, scanId, 150_000);
      expect(scan).toMatchObject({ status: 'completed', counts: { findings: items } });
      const { rows } = await d.db.query<{
        findings: number;
        records: number;
        cases: number;
        sightings: number;
      }>(
        `SELECT (SELECT count(*) FROM findings WHERE scan_id = $1)::int AS findings,
              (SELECT count(DISTINCT record_index) FROM findings WHERE scan_id = $1)::int AS records,
              (SELECT count(*) FROM cases WHERE last_scan_id = $1)::int AS cases,
              (SELECT coalesce(sum(sightings), 0) FROM cases WHERE last_scan_id = $1)::int AS sightings`,
        [scanId],
      );
      // Every finding once; one case per distinct fingerprint, each sighting counted once.
      const fingerprints = (
        await d.db.query<{ n: number }>(
          `SELECT count(DISTINCT fingerprint)::int AS n FROM findings WHERE scan_id = $1`,
          [scanId],
        )
      ).rows[0]!.n;
      expect(rows[0]).toEqual({ findings: items, records: items, cases: fingerprints, sightings: items });
    },
    210_000,
  );

  it.concurrent(
    'leaves no scan when a web process dies mid-upload; the next maintenance run aborts its multipart upload',
    async () => {
      await bigUploadDone;
      const port = Number(new URL(d.webB.url).port);
      const declared = 64 * 1024 * 1024;
      // More than one 8 MiB part, so the driver has begun a multipart upload; then a trickle.
      const up = await openUpload(
        port,
        { 'x-api-key': user.key, 'content-type': 'application/xml' },
        declared,
        nessus.subarray(0, 4096),
        '/api/pipeline/scan?name=cut-off',
      );
      up.send(Buffer.alloc(10 * 1024 * 1024, ' '));
      const uploads = async () =>
        (await d.s3.send(new ListMultipartUploadsCommand({ Bucket: d.bucket }))).Uploads ?? [];
      expect(await eventually(async () => (await uploads()).length > 0, 15_000)).toBe(true);
      const trickle = setInterval(() => up.send(' '), 200);
      try {
        await d.webB.stop('SIGKILL');
      } finally {
        clearInterval(trickle);
        up.close();
      }
      const scans = await json<{ data: { name: string | null }[] }>(
        api(d.webA.url, '/api/v1/scans?limit=100'),
      );
      expect(scans.data.map((scan) => scan.name)).not.toContain('cut-off');
      expect((await uploads()).length).toBe(1);

      // The maintenance job every worker runs each minute, run now (and again until it is due).
      const queue = new Queue('maintenance', { connection: { url: redisUrl }, prefix: d.redisPrefix });
      try {
        const aborted = await eventually(async () => {
          await queue.add('sweep', {});
          await new Promise((r) => setTimeout(r, 1000));
          return (await uploads()).length === 0;
        }, 3 * BODY_TIMEOUT_MS);
        expect(aborted).toBe(true);
      } finally {
        await queue.close();
      }
    },
    90_000,
  );

  it("keeps nothing on any process's own disk, and in the bucket only the export's and the completed scans' files", async () => {
    // A completed scan keeps its raw object until its workspace's retention removes it
    // (docs/operations.md#retention); a failed or cut-off one keeps none; the export's file stays
    // for its 24 hours.
    const keys = async () =>
      ((await d.s3.send(new ListObjectsV2Command({ Bucket: d.bucket }))).Contents ?? [])
        .map((o) => o.Key!)
        .sort();
    const completed = await d.db.query<{ id: string }>(
      `SELECT id FROM scans WHERE workspace_id = $1 AND status = 'completed'`,
      [user.workspaceId],
    );
    const expected = [exportId, ...completed.rows.map((r) => r.id)]
      .map((id) => `${user.workspaceId}/${id}.scan`)
      .sort();
    await eventually(async () => JSON.stringify(await keys()) === JSON.stringify(expected), 20_000);
    expect(await keys()).toEqual(expected);
    const written = d.dirs
      .filter((dir) => !path.basename(dir).startsWith('noshare-big-'))
      .flatMap((dir) => readdirSync(dir, { recursive: true }).map((f) => path.join(dir, String(f))));
    expect(written).toEqual([]);
  });
});

async function emptyAndDeleteBucket(s3: S3Client, Bucket: string): Promise<void> {
  const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket }));
  for (const u of uploads.Uploads ?? [])
    await s3.send(new AbortMultipartUploadCommand({ Bucket, Key: u.Key!, UploadId: u.UploadId! }));
  for (;;) {
    const page = await s3.send(new ListObjectsV2Command({ Bucket }));
    if (!page.Contents?.length) break;
    for (const o of page.Contents) await s3.send(new DeleteObjectCommand({ Bucket, Key: o.Key! }));
  }
  await s3.send(new DeleteBucketCommand({ Bucket }));
}
