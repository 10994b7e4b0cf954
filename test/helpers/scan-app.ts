import { createWriteStream, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { startTestApp, type TestApp } from './test-app.js';
import type { ScanStorage } from '../../src/domain/scans/scan-storage.js';
import { startScanIngestWorker } from '../../src/workers/scan-ingest-worker.js';

export interface ScanTestApp extends TestApp {
  storageDir: string;
  storage: ScanStorage;
  /** Starts (or restarts) the in-process scan-ingest worker. */
  startWorker(): void;
  stopWorker(): Promise<void>;
}

/**
 * The real app (its scan routes included), on a fresh database and a fresh queue namespace, and
 * its scan storage in a temporary folder, plus the scan-ingest worker in this
 * process (omit with `worker: false`, e.g. when a separate worker process is under test).
 */
export async function startScanApp(
  options: {
    redisUrl?: string;
    env?: Record<string, string>;
    worker?: boolean;
    batchSize?: number;
    /** A known queue namespace, so a worker in another process can serve this app's uploads. */
    queueNamespace?: string;
  } = {},
): Promise<ScanTestApp> {
  const storageDir = await mkdtemp(path.join(tmpdir(), 'scans-'));
  const app = await startTestApp({
    redisUrl: options.redisUrl,
    env: { SCAN_STORAGE_DIR: storageDir, ...options.env },
    ...(options.queueNamespace ? { queueNamespace: options.queueNamespace } : {}),
  });
  const storage = app.deps.scans.storage;
  let worker: { close(): Promise<void> } | null = null;
  const startWorker = () => {
    worker ??= startScanIngestWorker({
      queues: app.infra.queues,
      pool: app.infra.pool,
      logger: app.deps.logger,
      config: app.deps.config,
      storage,
      batchSize: options.batchSize ?? 100,
      triageScan: (scanId) => app.deps.caseTriage.triageScan(scanId),
      // As the Procfile worker: the deliveries a completion recorded are queued after it commits.
      afterScan: app.deps.workflows.trigger.scanCompleted,
    });
  };
  const stopWorker = async () => {
    await worker?.close();
    worker = null;
  };
  if (options.worker ?? true) startWorker();
  return {
    ...app,
    storageDir,
    storage,
    startWorker,
    stopWorker,
    async close() {
      await stopWorker();
      await app.close();
      await rm(storageDir, { recursive: true, force: true });
    },
  };
}

/** Polls the scan until it leaves queued/parsing. */
export async function waitForScan(
  app: FastifyInstance,
  key: string,
  scanId: string,
  timeoutMs = 30_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await app.inject({
      method: 'GET',
      url: `/api/pipeline/scan/${scanId}`,
      headers: { 'x-api-key': key },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json() as Record<string, unknown>;
    if (body.status === 'completed' || body.status === 'failed') return body;
    if (Date.now() > deadline)
      throw new Error(`scan ${scanId} still ${String(body.status)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Writes a Nessus file of at least `bytes` by repeating the hosts of a real fixture with new
 * addresses, so every copy is a new asset. Returns the number of ReportItems written.
 */
export async function writeLargeNessus(file: string, bytes: number): Promise<number> {
  const text = readFileSync(path.resolve('test/fixtures/scans/nessus/nessus_v_unknown.xml'), 'utf8');
  const hosts = [...text.matchAll(/<ReportHost [\s\S]*?<\/ReportHost>\s*/g)];
  const head = text.slice(0, hosts[0]!.index);
  const last = hosts[hosts.length - 1]!;
  const tail = text.slice(last.index + last[0].length);
  const out = createWriteStream(file);
  let written = 0;
  let items = 0;
  const write = async (s: string) => {
    written += Buffer.byteLength(s);
    if (!out.write(s)) await once(out, 'drain');
  };
  await write(head);
  for (let n = 0; written + tail.length < bytes; n++) {
    const ip = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
    const host = hosts[n % hosts.length]![0].replace(
      /<ReportHost name="[^"]*"/,
      `<ReportHost name="h${n}.test"`,
    )
      .replace(/<tag name="host-ip">[^<]*<\/tag>/, `<tag name="host-ip">${ip}</tag>`)
      .replace(/<tag name="host-fqdn">[^<]*<\/tag>/, `<tag name="host-fqdn">h${n}.test</tag>`);
    items += (host.match(/<ReportItem /g) ?? []).length;
    await write(host);
  }
  await write(tail);
  out.end();
  await once(out, 'finish');
  return items;
}

/** POSTs a scan to `/api/pipeline/scan` (raw body, `application/xml` unless `headers` say otherwise). */
export function uploadScan(
  app: FastifyInstance,
  key: string,
  payload: Buffer | string | Readable,
  headers: Record<string, string> = {},
  query = '',
) {
  return app.inject({
    method: 'POST',
    url: `/api/pipeline/scan${query}`,
    headers: { 'x-api-key': key, 'content-type': 'application/xml', ...headers },
    payload,
  });
}

/** One part of a hand-built multipart/form-data body: a file when `filename` is given, else a text field. */
export interface MultipartPart {
  name: string;
  filename?: string;
  contentType?: string;
  body: Buffer | string;
}

/** A multipart/form-data body in the exact bytes a client sends, with its Content-Type header. */
export function multipartBody(
  parts: MultipartPart[],
  boundary = '----scan-test-boundary',
): { body: Buffer; contentType: string } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}`;
    const type = p.contentType ? `Content-Type: ${p.contentType}\r\n` : '';
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`));
    chunks.push(Buffer.isBuffer(p.body) ? p.body : Buffer.from(p.body));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Files of a workspace in scan storage, committed (`<id>.scan`) or partial (`.part`). */
export async function storedFiles(t: ScanTestApp, workspaceId: string): Promise<string[]> {
  return readdir(path.join(t.storageDir, workspaceId)).catch(() => []);
}

/** Scan rows of a workspace, whatever their status. */
export async function scanCount(t: ScanTestApp, workspaceId: string): Promise<number> {
  const { rows } = await t.infra.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM scans WHERE workspace_id = $1`,
    [workspaceId],
  );
  return rows[0]!.n;
}

/** Rows a scan left behind: its findings, those carrying evidence (m020), and cases it created or last saw. */
export async function rowsOfScan(
  t: ScanTestApp,
  scanId: string,
): Promise<{ findings: number; evidence: number; cases: number }> {
  const { rows } = await t.infra.pool.query<{ findings: number; evidence: number; cases: number }>(
    `SELECT (SELECT count(*) FROM findings WHERE scan_id = $1)::int AS findings,
            (SELECT count(*) FROM findings WHERE scan_id = $1 AND (raw_excerpt <> '' OR scanner_output IS NOT NULL))::int AS evidence,
            (SELECT count(*) FROM cases WHERE first_scan_id = $1 OR last_scan_id = $1)::int AS cases`,
    [scanId],
  );
  return rows[0]!;
}

/** Starts the app's HTTP listener on a free port of 127.0.0.1 and returns the port. */
export async function listenOnFreePort(t: ScanTestApp): Promise<number> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (typeof address !== 'object' || !address) throw new Error('server has no TCP address');
  return address.port;
}

/**
 * A client that gives up mid-upload: sends a request head declaring `declared` body bytes over
 * a plain TCP socket, writes `sent` of them, runs `whileOpen` (by default, waits 300 ms for the
 * server to take them), and destroys the socket without ever sending the rest.
 */
export async function disconnectMidUpload(
  port: number,
  headers: Record<string, string>,
  declared: number,
  sent: Buffer,
  whileOpen: () => Promise<void> = () => new Promise((r) => setTimeout(r, 300)),
): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.on('error', () => undefined);
  const head = Object.entries({ host: '127.0.0.1', ...headers, 'content-length': String(declared) })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.write(`POST /api/pipeline/scan HTTP/1.1\r\n${head}\r\n`);
  if (!socket.write(sent)) await once(socket, 'drain');
  try {
    await whileOpen();
  } finally {
    socket.destroy();
  }
}

/** Polls `check` until it returns true or `timeoutMs` passes; returns its last answer. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 3_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An upload held open by the test: what was sent so far, and what the server answers. */
export interface OpenUpload {
  socket: net.Socket;
  /** The raw HTTP response (head and body) once the server answered and closed, or the socket ended. */
  response: Promise<string>;
  /** Writes more body bytes. */
  send(bytes: Buffer | string): void;
  close(): void;
}

/**
 * Starts an upload over a plain TCP socket declaring `declared` body bytes and sends `sent` of
 * them; the test decides what happens next (send more slowly, stall, close). `target`: the
 * request's path and query.
 */
export async function openUpload(
  port: number,
  headers: Record<string, string>,
  declared: number,
  sent: Buffer | string = '',
  target = '/api/pipeline/scan',
): Promise<OpenUpload> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.on('error', () => undefined);
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString('utf8')));
  const response = new Promise<string>((resolve) => socket.once('close', () => resolve(text)));
  const head = Object.entries({ host: '127.0.0.1', ...headers, 'content-length': String(declared) })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.write(`POST ${target} HTTP/1.1\r\n${head}\r\n`);
  if (sent.length > 0) socket.write(sent);
  return {
    socket,
    response,
    send: (bytes) => void socket.write(bytes),
    close: () => socket.destroy(),
  };
}

/** Status line and JSON body of a raw HTTP/1.1 response (Content-Length framed). */
export function parseRawResponse(raw: string): { status: number; headers: string; body: unknown } {
  const [head = '', ...rest] = raw.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? NaN);
  const text = rest.join('\r\n\r\n');
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status, headers: head.toLowerCase(), body };
}
