import { createWriteStream, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
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
export async function waitForScan(app: FastifyInstance, key: string, scanId: string, timeoutMs = 30_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await app.inject({ method: 'GET', url: `/api/pipeline/scan/${scanId}`, headers: { 'x-api-key': key } });
    expect(res.statusCode).toBe(200);
    const body = res.json() as Record<string, unknown>;
    if (body.status === 'completed' || body.status === 'failed') return body;
    if (Date.now() > deadline) throw new Error(`scan ${scanId} still ${String(body.status)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Writes a Nessus file of at least `bytes` by repeating the hosts of a real fixture with new
 * addresses, so every copy is a new asset. Returns the number of ReportItems written.
 */
export async function writeLargeNessus(file: string, bytes: number): Promise<number> {
  const text = readFileSync(path.resolve('../shared/fixtures/scans/nessus/nessus_v_unknown.xml'), 'utf8');
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
    const host = hosts[n % hosts.length]![0]
      .replace(/<ReportHost name="[^"]*"/, `<ReportHost name="h${n}.test"`)
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
