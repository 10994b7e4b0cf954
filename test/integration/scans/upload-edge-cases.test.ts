import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueBackends } from '../../helpers/db.js';
import { signUp } from '../../helpers/test-app.js';
import { problemDocument } from '../../helpers/problem.js';
import {
  disconnectMidUpload,
  eventually,
  listenOnFreePort,
  multipartBody,
  scanCount,
  startScanApp,
  storedFiles,
  uploadScan,
  waitForScan,
  type ScanTestApp,
} from '../../helpers/scan-app.js';

/*
 * Upload edge cases of `POST /api/pipeline/scan` (docs/ingestion.md#refused-uploads, docs/api.md#errors): multipart bodies that do not
 * carry a file in "file", corrupt gzip, an Idempotency-Key reused by another workspace, and a
 * client that goes away mid-upload. A refused upload leaves no scan row and no stored file.
 */

/** The plan limit of these apps (SCAN_MAX_BYTES caps every plan): above the 10 MB of the disconnect test. */
const LIMIT = 12 * 1024 * 1024;
/** MULTIPART_OVERHEAD of src/api/routes/scans.ts: room for boundaries on top of the file. */
const MULTIPART_OVERHEAD = 64 * 1024;
const SCAN = readFileSync(path.resolve('test/fixtures/scans/openvas/one_vuln.xml'));

const MISSING_FILE = (status = 400) => ({
  ...problemDocument(
    status,
    'invalid_request',
    'Invalid request',
    'Send the scan as a file in the multipart field "file" (curl -F file=@scan.xml).',
  ),
  errors: [{ path: '/file', message: 'is required' }],
});
const MALFORMED_MULTIPART = problemDocument(
  400,
  'invalid_request',
  'Invalid request',
  'The multipart/form-data body could not be read (no boundary, malformed part headers or cut short).',
);
const CUT_SHORT = problemDocument(
  400,
  'invalid_request',
  'Invalid request',
  'The upload ended before the whole body arrived (connection closed or multipart body cut short).',
);
const CORRUPT_GZIP = problemDocument(
  400,
  'invalid_request',
  'Invalid request',
  'The gzip-compressed body is corrupt or truncated.',
);
const TOO_LARGE = problemDocument(
  413,
  'payload_too_large',
  'Payload too large',
  `The scan is larger than your plan allows (${LIMIT} bytes).`,
);

const backends = queueBackends('scans/upload-edge-cases');

describe.each(backends)('upload edge cases on $name', ({ name, redisUrl }) => {
  const skip = name === 'Redis' && !redisUrl;
  let t: ScanTestApp;
  let port: number;
  /** Uploads that must all be refused go to this workspace: it never has a scan or a file. */
  let refused: { key: string; workspaceId: string };
  /** Uploads that are accepted. */
  let accepted: { key: string; workspaceId: string };

  beforeAll(async () => {
    if (skip) return;
    t = await startScanApp({ redisUrl, env: { SCAN_MAX_BYTES: String(LIMIT) } });
    refused = await signUp(t.app);
    accepted = await signUp(t.app);
    port = await listenOnFreePort(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  const refuse = (payload: Buffer | string | Readable, headers: Record<string, string>, query = '') =>
    uploadScan(t.app, refused.key, payload, headers, query);

  /** The refused workspace has no scan row and no file, committed or partial. */
  const expectNothingStored = async () => {
    expect(await scanCount(t, refused.workspaceId)).toBe(0);
    expect(await storedFiles(t, refused.workspaceId)).toEqual([]);
  };

  const filePart = (body: Buffer | string = SCAN, fieldName = 'file') => ({
    name: fieldName,
    filename: 'one_vuln.xml',
    contentType: 'application/xml',
    body,
  });

  describe('multipart', () => {
    it.skipIf(skip).each([
      { case: 'the file in another field ("upload")', parts: [filePart(SCAN, 'upload')] },
      { case: 'only text fields, no file part', parts: [{ name: 'name', body: 'nightly' }] },
      { case: '"file" sent as a text field (curl -F file=<scan.xml)', parts: [{ name: 'file', body: SCAN }] },
      { case: 'no part at all', parts: [] },
    ])('400 when the body has no file part named "file": $case', async ({ parts }) => {
      const { body, contentType } = multipartBody(parts);
      const res = await refuse(body, { 'content-type': contentType });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toEqual(MISSING_FILE());
      // Refused before the body was read to its end: not drained on a kept-alive connection.
      expect(res.headers.connection).toBe('close');
      await expectNothingStored();
    });

    it.skipIf(skip)(
      '400, not 500, for a multipart Content-Type without a boundary or a body that is not multipart',
      async () => {
        const noBoundary = await refuse(SCAN, { 'content-type': 'multipart/form-data' });
        expect(noBoundary.statusCode).toBe(400);
        expect(noBoundary.json()).toEqual(MALFORMED_MULTIPART);
        const notMultipart = await refuse('this is not a multipart body', {
          'content-type': 'multipart/form-data; boundary=xyz',
        });
        expect(notMultipart.statusCode).toBe(400);
        expect(notMultipart.json()).toEqual(MALFORMED_MULTIPART);
        await expectNothingStored();
      },
    );

    it.skipIf(skip)(
      '400, not 500, for a multipart body cut short inside the file part, and the partial file is deleted',
      async () => {
        const { body, contentType } = multipartBody([filePart()]);
        const res = await refuse(body.subarray(0, body.length - 200), { 'content-type': contentType });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual(CUT_SHORT);
        await expectNothingStored();
      },
    );

    it.skipIf(skip)(
      '413 before reading when Content-Length is over the plan limit plus the multipart allowance',
      async () => {
        const { body, contentType } = multipartBody([
          filePart(Buffer.alloc(LIMIT + MULTIPART_OVERHEAD, 'x')),
        ]);
        const res = await refuse(body, { 'content-type': contentType });
        expect(res.statusCode).toBe(413);
        expect(res.json()).toEqual(TOO_LARGE);
        expect(res.headers.connection).toBe('close');
        await expectNothingStored();
      },
    );

    it.skipIf(skip)(
      '413 mid-stream when the file passes the limit within the multipart allowance, and the partial file is deleted',
      async () => {
        const { body, contentType } = multipartBody([filePart(Buffer.alloc(LIMIT + 1, 'x'))]);
        expect(body.length).toBeLessThanOrEqual(LIMIT + MULTIPART_OVERHEAD);
        const res = await refuse(body, { 'content-type': contentType });
        expect(res.statusCode).toBe(413);
        expect(res.json()).toEqual(TOO_LARGE);
        expect(res.headers.connection).toBe('close');
        await expectNothingStored();
      },
    );

    it.skipIf(skip)(
      '413 mid-stream for an oversized multipart body sent without Content-Length',
      async () => {
        const { body, contentType } = multipartBody([filePart(Buffer.alloc(LIMIT + 1, 'x'))]);
        const chunks = Array.from({ length: Math.ceil(body.length / 65536) }, (_, i) =>
          body.subarray(i * 65536, (i + 1) * 65536),
        );
        const res = await refuse(Readable.from(chunks), { 'content-type': contentType });
        expect(res.statusCode).toBe(413);
        expect(res.json()).toEqual(TOO_LARGE);
        await expectNothingStored();
      },
    );

    it.skipIf(skip)(
      'a text field before the file part is allowed and ignored: the file is stored and parsed as detected',
      async () => {
        const { body, contentType } = multipartBody([{ name: 'format', body: 'sarif' }, filePart()]);
        const res = await uploadScan(t.app, accepted.key, body, { 'content-type': contentType });
        expect(res.statusCode).toBe(202);
        const done = await waitForScan(t.app, accepted.key, (res.json() as { scanId: string }).scanId);
        expect(done).toMatchObject({
          status: 'completed',
          format: 'openvas',
          bytes: SCAN.length,
          counts: { findings: 1 },
        });
      },
    );
  });

  describe('corrupt gzip', () => {
    const gz = gzipSync(SCAN);
    const badCrc = Buffer.from(gz);
    badCrc[badCrc.length - 8]! ^= 0xff;

    it.skipIf(skip).each<{ case: string; body: Buffer; headers: Record<string, string> }>([
      {
        case: 'Content-Encoding: gzip on a body that is not gzip',
        body: SCAN,
        headers: { 'content-encoding': 'gzip' },
      },
      {
        case: 'a truncated gzip stream',
        body: gz.subarray(0, Math.floor(gz.length / 2)),
        headers: { 'content-encoding': 'gzip' },
      },
      {
        case: 'a gzip stream whose CRC does not match',
        body: badCrc,
        headers: { 'content-encoding': 'gzip' },
      },
      {
        case: 'a truncated gzip stream recognised by its magic bytes, without Content-Encoding',
        body: gz.subarray(0, Math.floor(gz.length / 2)),
        headers: { 'content-type': 'application/octet-stream' },
      },
    ])('400 for $case, and nothing is stored', async ({ body, headers }) => {
      const res = await refuse(body, headers);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(CORRUPT_GZIP);
      await expectNothingStored();
    });

    it.skipIf(skip)('400 for a truncated gzip stream sent without Content-Length', async () => {
      const res = await refuse(Readable.from([gz.subarray(0, 100), gz.subarray(100, gz.length - 20)]), {
        'content-encoding': 'gzip',
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(CORRUPT_GZIP);
      await expectNothingStored();
    });
  });

  describe('Idempotency-Key', () => {
    it.skipIf(skip)('another workspace using the same key with the same body gets its own scan', async () => {
      const other = await signUp(t.app);
      const idempotencyKey = `ci-run-${name}`;
      const mine = await uploadScan(t.app, accepted.key, SCAN, { 'idempotency-key': idempotencyKey });
      const theirs = await uploadScan(t.app, other.key, SCAN, { 'idempotency-key': idempotencyKey });
      expect(mine.statusCode).toBe(202);
      expect(theirs.statusCode).toBe(202);
      const mineId = (mine.json() as { scanId: string }).scanId;
      const theirsId = (theirs.json() as { scanId: string }).scanId;
      expect(theirsId).not.toBe(mineId);

      // Each workspace replays its own scan, and neither can see the other's.
      const replay = await uploadScan(t.app, other.key, SCAN, { 'idempotency-key': idempotencyKey });
      expect(replay.statusCode).toBe(202);
      expect((replay.json() as { scanId: string }).scanId).toBe(theirsId);
      const peek = await t.app.inject({
        method: 'GET',
        url: `/api/pipeline/scan/${mineId}`,
        headers: { 'x-api-key': other.key },
      });
      expect(peek.statusCode).toBe(404);

      expect(await waitForScan(t.app, other.key, theirsId)).toMatchObject({
        status: 'completed',
        counts: { findings: 1, new: 1 },
      });
      expect(await waitForScan(t.app, accepted.key, mineId)).toMatchObject({ status: 'completed' });
      const rows = await t.infra.pool.query<{ workspace_id: string }>(
        `SELECT workspace_id FROM scans WHERE idempotency_key = $1 ORDER BY workspace_id`,
        [idempotencyKey],
      );
      expect(rows.rows.map((r) => r.workspace_id)).toEqual([accepted.workspaceId, other.workspaceId].sort());
    });
  });

  describe('a client that disconnects mid-upload', () => {
    const declared = 10 * 1024 * 1024;
    const firstMegabyte = Buffer.alloc(1024 * 1024, 'a');
    firstMegabyte.write('<?xml version="1.0"?>\n<NessusClientData_v2><Report name="r">');

    /** Holds the socket open until the server is writing the upload to storage. */
    const whileUploading = async () => {
      const writing = await eventually(async () =>
        (await storedFiles(t, refused.workspaceId)).some((f) => f.endsWith('.part')),
      );
      expect(writing).toBe(true);
    };

    /** Nothing of the aborted upload remains, and it was not logged as a server error. */
    const expectCleanedUp = async () => {
      const clean = await eventually(
        async () =>
          (await scanCount(t, refused.workspaceId)) === 0 &&
          (await storedFiles(t, refused.workspaceId)).length === 0,
      );
      expect(clean).toBe(true);
      await expectNothingStored();
      expect(t.logs.filter((l) => l.includes('unhandled error'))).toEqual([]);
    };

    it.skipIf(skip)('a raw body: 1 MB of a declared 10 MB, then the socket is destroyed', async () => {
      await disconnectMidUpload(
        port,
        { 'x-api-key': refused.key, 'content-type': 'application/xml' },
        declared,
        firstMegabyte,
        whileUploading,
      );
      await expectCleanedUp();
    });

    it.skipIf(skip)(
      'a multipart body: 1 MB of the file part of a declared 10 MB, then the socket is destroyed',
      async () => {
        const boundary = 'disconnect-boundary';
        const head = Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.nessus"\r\nContent-Type: application/xml\r\n\r\n`,
        );
        await disconnectMidUpload(
          port,
          { 'x-api-key': refused.key, 'content-type': `multipart/form-data; boundary=${boundary}` },
          declared,
          Buffer.concat([head, firstMegabyte]),
          whileUploading,
        );
        await expectCleanedUp();
      },
    );
  });
});
