import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { queueBackends } from '../../helpers/db.js';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, type ScanTestApp } from '../../helpers/scan-app.js';
import { acceptScan } from '../../../src/domain/scans/accept-scan.js';
import { startParsing } from '../../../src/domain/scans/scan-store.js';
import { problemDocument } from '../../helpers/problem.js';

const backends = queueBackends('scans/upload-refusals');

/** The plan limit of these apps: SCAN_MAX_BYTES caps every plan. */
const LIMIT = 200_000;
const SCAN = readFileSync(path.resolve('test/fixtures/scans/openvas/one_vuln.xml'));

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from sending the request head to the server closing the connection. */
  closedAfterMs: number;
}

/**
 * Sends a request head declaring `declared` body bytes and only `sent` of them over a plain TCP
 * socket, then waits (up to `timeoutMs`) for the server to answer and close the connection.
 */
async function partialUpload(
  port: number,
  headers: Record<string, string>,
  declared: number,
  sent: string,
  timeoutMs = 5_000,
): Promise<RawResponse> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const head = Object.entries({
    host: '127.0.0.1',
    connection: 'keep-alive',
    ...headers,
    'content-length': String(declared),
  })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const started = Date.now();
  socket.write(`POST /api/pipeline/scan HTTP/1.1\r\n${head}\r\n${sent}`);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `connection still open after ${timeoutMs} ms; received: ${Buffer.concat(chunks).toString()}`,
            ),
          ),
        timeoutMs,
      );
      socket.once('end', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  } finally {
    socket.destroy();
  }
  const closedAfterMs = Date.now() - started;
  const text = Buffer.concat(chunks).toString();
  const [headText = '', body = ''] = text.split('\r\n\r\n', 2);
  const [statusLine = '', ...headerLines] = headText.split('\r\n');
  const parsed: Record<string, string> = {};
  for (const line of headerLines) {
    const i = line.indexOf(':');
    parsed[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers: parsed, body, closedAfterMs };
}

describe.each(backends)('upload refusals on $name', ({ name, redisUrl }) => {
  let t: ScanTestApp;
  let key: string;
  let workspaceId: string;
  let port: number;

  const storedFiles = async (): Promise<string[]> =>
    readdir(path.join(t.storageDir, workspaceId)).catch(() => []);
  const scanCount = async (): Promise<number> =>
    (
      await t.infra.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM scans WHERE workspace_id = $1`,
        [workspaceId],
      )
    ).rows[0]!.n;

  beforeAll(async () => {
    if (name === 'Redis' && !redisUrl) return;
    t = await startScanApp({ redisUrl, worker: false, env: { SCAN_MAX_BYTES: String(LIMIT) } });
    ({ key, workspaceId } = await signUp(t.app));
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  afterAll(async () => {
    await t?.close();
  });

  it.skipIf(name === 'Redis' && !redisUrl)(
    'answers 413 as soon as Content-Length is over the limit and closes the connection without reading the body',
    async () => {
      const res = await partialUpload(
        port,
        { 'x-api-key': key, 'content-type': 'application/xml' },
        50 * 1024 ** 3,
        '<?xml version="1.0"?>',
      );
      expect(res.status).toBe(413);
      expect(res.headers.connection).toBe('close');
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(res.body)).toEqual(
        problemDocument(
          413,
          'payload_too_large',
          'Payload too large',
          `The scan is larger than your plan allows (${LIMIT} bytes).`,
        ),
      );
      // The server closed the socket itself, with 50 GiB still undelivered: it did not wait for them.
      expect(res.closedAfterMs).toBeLessThan(5_000);
      expect(await storedFiles()).toEqual([]);
      expect(await scanCount()).toBe(0);
    },
  );

  it.skipIf(name === 'Redis' && !redisUrl)(
    'answers 503 overloaded when the parse cannot be queued, keeps neither the scan nor its file, and a retry with the same Idempotency-Key succeeds',
    async () => {
      const idempotencyKey = `retry-${randomUUID()}`;
      const add = vi
        .spyOn(t.deps.scans.queue, 'add')
        .mockRejectedValueOnce(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
      const upload = () =>
        t.app.inject({
          method: 'POST',
          url: '/api/pipeline/scan',
          headers: { 'x-api-key': key, 'content-type': 'application/xml', 'idempotency-key': idempotencyKey },
          payload: SCAN,
        });
      try {
        const refused = await upload();
        expect(refused.statusCode).toBe(503);
        expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(refused.headers['retry-after']).toBe('5');
        expect(refused.json()).toEqual(
          problemDocument(
            503,
            'overloaded',
            'Overloaded',
            'The scan could not be queued for parsing and was not kept; retry the upload.',
          ),
        );
        expect(refused.body).not.toContain('ECONNREFUSED');
        expect(await scanCount()).toBe(0);
        expect(await storedFiles()).toEqual([]);

        const retried = await upload();
        expect(retried.statusCode).toBe(202);
        expect(retried.json()).toMatchObject({ status: 'queued' });
        expect(add).toHaveBeenCalledTimes(2);
        expect(await scanCount()).toBe(1);
        expect(await storedFiles()).toEqual([`${retried.json().scanId as string}.scan`]);
      } finally {
        add.mockRestore();
      }
    },
  );
});

describe('acceptScan when the enqueue fails', () => {
  let t: ScanTestApp;
  let workspaceId: string;

  beforeAll(async () => {
    t = await startScanApp({ worker: false });
    ({ workspaceId } = await signUp(t.app));
  });
  afterAll(async () => {
    await t?.close();
  });

  const input = () => ({
    workspaceId,
    keyId: null,
    body: Readable.from([SCAN]),
    gzip: false,
    maxBytes: LIMIT,
    format: null,
    name: null,
    asset: { name: null, environment: null, criticality: null, internetExposed: null },
    idempotencyKey: null,
  });

  it('accepts the upload after all when a worker already claimed the scan (the job reached the queue before the error)', async () => {
    const { scan } = await acceptScan(
      {
        pool: t.infra.pool,
        storage: t.storage,
        enqueue: async ({ scanId }) => {
          await startParsing(t.infra.pool, scanId);
          throw new Error('timeout waiting for the queue');
        },
      },
      input(),
    );
    const row = await t.infra.pool.query(`SELECT status FROM scans WHERE id = $1`, [scan.id]);
    expect(row.rows[0]).toEqual({ status: 'parsing' });
    expect(await t.storage.size(scan.storagePath)).toBe(SCAN.length);
  });

  it('withdraws a scan nobody claimed and rejects with 503 overloaded', async () => {
    let scanId = '';
    const err = await acceptScan(
      {
        pool: t.infra.pool,
        storage: t.storage,
        enqueue: async (s) => {
          scanId = s.scanId;
          throw new Error('queue down');
        },
      },
      input(),
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'AppError', code: 'overloaded', status: 503 });
    expect((await t.infra.pool.query(`SELECT 1 FROM scans WHERE id = $1`, [scanId])).rowCount).toBe(0);
    expect(await t.storage.size(`${workspaceId}/${scanId}`)).toBeNull();
  });
});
