import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../helpers/test-app.js';
import {
  eventually,
  listenOnFreePort,
  openUpload,
  parseRawResponse,
  scanCount,
  startScanApp,
  storedFiles,
  uploadScan,
  type ScanTestApp,
} from '../helpers/scan-app.js';

/*
 * docs/ingestion.md#upload-bounds: an upload's cost to the machine is bounded whatever the client sends. A gzip
 * bomb is refused after megabytes (ratio and decompressed-size limits), a body that stalls or
 * trickles is answered 408 in the problem shape with its partial file deleted, concurrent
 * uploads are capped per workspace (429) and per process (503), and an upload is refused
 * before any byte is stored when the disk is nearly full (503). Each case is bounded in time.
 */

const nessus = readFileSync(path.resolve('test/fixtures/scans/nessus/nessus_v_unknown.xml'));

describe('gzip bombs and slow bodies', () => {
  let t: ScanTestApp;
  let key: string;
  let workspaceId: string;
  let port: number;

  beforeAll(async () => {
    t = await startScanApp({
      worker: false,
      env: {
        UPLOAD_IDLE_TIMEOUT_MS: '500',
        UPLOAD_BODY_TIMEOUT_MS: '2000',
        GZIP_MAX_BYTES: String(12 * 1024 ** 2),
      },
    });
    ({ key, workspaceId } = await signUp(t.app));
    port = await listenOnFreePort(t);
  });
  afterAll(async () => t?.close());

  it('refuses a gzip bomb with 413 after a few megabytes, keeping no file', { timeout: 20_000 }, async () => {
    // 64 MiB of zeros in 64 KiB: a 1,000:1 expansion no scan file has.
    const bomb = gzipSync(Buffer.alloc(64 * 1024 ** 2));
    // In 4 KiB pieces, as a network delivers it (a single 64 KiB chunk would allow 200 × 64 KiB).
    const pieces = Array.from({ length: Math.ceil(bomb.length / 4096) }, (_, i) =>
      bomb.subarray(i * 4096, (i + 1) * 4096),
    );
    const res = await uploadScan(t.app, key, Readable.from(pieces), {
      'content-type': 'application/gzip',
      'content-encoding': 'gzip',
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'payload_too_large', detail: expect.stringMatching(/expands/) });
    expect(await storedFiles(t, workspaceId)).toEqual([]);
    expect(await scanCount(t, workspaceId)).toBe(0);
  });

  it('refuses gzip that decompresses past GZIP_MAX_BYTES, and takes an ordinary gzip scan', async () => {
    // Random hex compresses about 2:1, far under the ratio limit: only the size limit stops it.
    const big = gzipSync(Buffer.from(randomBytes(7 * 1024 ** 2).toString('hex')));
    const res = await uploadScan(t.app, key, big, { 'content-encoding': 'gzip' }, '?format=nessus');
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({
      code: 'payload_too_large',
      detail: expect.stringMatching(/decompresses/),
    });
    const ok = await uploadScan(t.app, key, gzipSync(nessus), { 'content-encoding': 'gzip' });
    expect(ok.statusCode).toBe(202);
  });

  it(
    'answers 408 in the problem shape when the body stalls, and deletes the partial file',
    { timeout: 10_000 },
    async () => {
      const started = Date.now();
      const up = await openUpload(
        port,
        { 'x-api-key': key, 'content-type': 'application/xml' },
        100_000,
        nessus.subarray(0, 2048),
      );
      expect(
        await eventually(async () => (await storedFiles(t, workspaceId)).some((f) => f.endsWith('.part'))),
      ).toBe(true);
      const res = parseRawResponse(await up.response);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(res.status).toBe(408);
      expect(res.headers).toContain('content-type: application/problem+json');
      expect(res.headers).toContain('connection: close');
      expect(res.body).toMatchObject({
        status: 408,
        code: 'request_timeout',
        detail: expect.stringMatching(/No bytes/),
      });
      expect(
        await eventually(async () => (await storedFiles(t, workspaceId)).every((f) => !f.endsWith('.part'))),
      ).toBe(true);
    },
  );

  it('answers 408 when the body trickles past the body timeout', { timeout: 10_000 }, async () => {
    const started = Date.now();
    const up = await openUpload(port, { 'x-api-key': key, 'content-type': 'application/xml' }, 100_000, '<');
    const drip = setInterval(() => up.send('x'), 100);
    try {
      const res = parseRawResponse(await up.response);
      expect(res.status).toBe(408);
      expect(res.body).toMatchObject({
        code: 'request_timeout',
        detail: expect.stringMatching(/longer than 2000 ms/),
      });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      clearInterval(drip);
    }
    expect(
      await eventually(async () => (await storedFiles(t, workspaceId)).every((f) => !f.endsWith('.part'))),
    ).toBe(true);
  });
});

describe('concurrent uploads', () => {
  let t: ScanTestApp;
  let port: number;

  beforeAll(async () => {
    t = await startScanApp({
      worker: false,
      env: { UPLOADS_PER_WORKSPACE: '2', UPLOADS_MAX_CONCURRENT: '3' },
    });
    port = await listenOnFreePort(t);
  });
  afterAll(async () => t?.close());

  it(
    'caps uploads per workspace (429) and per process (503), with Retry-After, and frees places',
    { timeout: 20_000 },
    async () => {
      const a = await signUp(t.app);
      const b = await signUp(t.app);
      const gate = t.deps.scans.uploadGate;
      const held = [];
      for (let i = 0; i < 2; i++)
        held.push(
          await openUpload(port, { 'x-api-key': a.key, 'content-type': 'application/xml' }, 100_000, '<'),
        );
      expect(await eventually(async () => gate.active === 2)).toBe(true);

      const third = await uploadScan(t.app, a.key, nessus);
      expect(third.statusCode).toBe(429);
      expect(third.headers['retry-after']).toBe('5');
      expect(third.json()).toMatchObject({ code: 'rate_limited' });

      // Another workspace still gets in, up to the process's cap.
      expect((await uploadScan(t.app, b.key, nessus)).statusCode).toBe(202);
      held.push(
        await openUpload(port, { 'x-api-key': b.key, 'content-type': 'application/xml' }, 100_000, '<'),
      );
      expect(await eventually(async () => gate.active === 3)).toBe(true);
      const full = await uploadScan(t.app, b.key, nessus);
      expect(full.statusCode).toBe(503);
      expect(full.headers['retry-after']).toBe('5');
      expect(full.json()).toMatchObject({ code: 'overloaded' });

      for (const h of held) h.close();
      expect(await eventually(async () => gate.active === 0)).toBe(true);
      expect((await uploadScan(t.app, a.key, nessus)).statusCode).toBe(202);
      expect(await storedFiles(t, a.workspaceId).then((f) => f.filter((x) => x.endsWith('.part')))).toEqual(
        [],
      );
    },
  );
});

describe('disk nearly full', () => {
  let t: ScanTestApp;

  beforeAll(async () => {
    t = await startScanApp({ worker: false, env: { SCAN_STORAGE_MIN_FREE_BYTES: String(2 ** 52) } });
  });
  afterAll(async () => t?.close());

  it('refuses an upload with 503 before storing a byte', async () => {
    const { key, workspaceId } = await signUp(t.app);
    const res = await uploadScan(t.app, key, nessus);
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.json()).toMatchObject({ code: 'overloaded', detail: expect.stringMatching(/storage/) });
    expect(await storedFiles(t, workspaceId)).toEqual([]);
    expect(await scanCount(t, workspaceId)).toBe(0);
  });
});
