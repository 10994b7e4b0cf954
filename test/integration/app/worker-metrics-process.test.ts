import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../helpers/db.js';
import { signUpOverHttp, startServerProcess, type ServerProcess } from '../../helpers/server-process.js';
import { TEST_PEPPER } from '../../helpers/test-app.js';
import { parsePrometheus, sampleSum } from '../../helpers/prometheus.js';

/**
 * The worker process's `/metrics` (README: Operations), as deployed: `src/main.ts web` and
 * `src/main.ts worker` as two processes on one database, the worker with METRICS_PORT. A scan
 * uploaded to the web process is parsed by the worker, and the worker's own listener shows it
 * (scan outcome, bytes and findings, job timing, queue depth, process metrics); the web process's
 * registry does not, since each process counts what it did.
 */
const TOKEN = 'worker-metrics-token-0123456789abcdef';
const nessus = readFileSync(path.resolve('test/fixtures/scans/nessus/nessus_v_unknown.xml'));
const NESSUS_ITEMS = (nessus.toString('utf8').match(/<ReportItem /g) ?? []).length;

let web: ServerProcess;
let worker: ServerProcess;
let metricsUrl: string;
const cleanups: (() => Promise<void>)[] = [];

/** A port nothing listens on right now, for METRICS_PORT. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  const db = await createTestDatabase();
  cleanups.push(db.drop);
  const storage = await mkdtemp(path.join(tmpdir(), 'worker-metrics-'));
  cleanups.push(() => rm(storage, { recursive: true, force: true }));
  const env = {
    DATABASE_URL: db.url,
    KEY_PEPPER: TEST_PEPPER,
    REDIS_URL: '',
    SCAN_STORAGE_DIR: storage,
    METRICS_TOKEN: TOKEN,
    HOST: '127.0.0.1',
  };
  const port = await freePort();
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  [web, worker] = await Promise.all([
    startServerProcess('web', env),
    startServerProcess('worker', { ...env, METRICS_PORT: String(port) }),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([web?.stop('SIGKILL'), worker?.stop('SIGKILL')]);
  for (const c of cleanups) await c();
});

const scrape = async (url: string) => {
  const res = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await res.text());
};

describe('worker process METRICS_PORT', () => {
  it('refuses a scrape without the token and serves nothing but /metrics', async () => {
    const bare = await fetch(metricsUrl);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    expect(await bare.json()).toMatchObject({ status: 401, code: 'unauthenticated' });
    const other = await fetch(metricsUrl.replace('/metrics', '/api/v1/models'));
    expect(other.status).toBe(404);
    expect(other.headers.get('content-type')).toBe('application/problem+json');
  });

  it("shows the scan the worker parsed; the web process's registry does not", async () => {
    const before = await scrape(metricsUrl);
    expect(sampleSum(before, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    const { key } = await signUpOverHttp(web.url);
    const upload = await fetch(`${web.url}/api/pipeline/scan`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/xml' },
      body: nessus,
    });
    expect(upload.status).toBe(202);
    const { scanId } = (await upload.json()) as { scanId: string };
    let status = '';
    for (let i = 0; i < 600 && status !== 'completed' && status !== 'failed'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const res = await fetch(`${web.url}/api/pipeline/scan/${scanId}`, { headers: { 'x-api-key': key } });
      status = ((await res.json()) as { status: string }).status;
    }
    expect(status).toBe('completed');

    // The job's metrics are recorded as it completes, just after the scan row says so.
    let after = await scrape(metricsUrl);
    for (let i = 0; i < 50 && sampleSum(after, 'vuln_triage_scans_total') === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await scrape(metricsUrl);
    }
    expect(sampleSum(after, 'vuln_triage_scans_total', { format: 'nessus', outcome: 'completed' })).toBe(1);
    expect(sampleSum(after, 'vuln_triage_scan_findings_parsed_total', { format: 'nessus' })).toBe(
      NESSUS_ITEMS,
    );
    expect(sampleSum(after, 'vuln_triage_scan_bytes_parsed_total', { format: 'nessus' })).toBe(nessus.length);
    const jobs = sampleSum(after, 'vuln_triage_job_duration_seconds_count', { outcome: 'completed' });
    expect(jobs).toBeGreaterThanOrEqual(1);
    expect(after.some((s) => s.name === 'vuln_triage_queue_jobs' && s.labels.state === 'waiting')).toBe(true);

    const webSide = await scrape(`${web.url}/metrics`);
    expect(sampleSum(webSide, 'vuln_triage_scans_total')).toBe(0);
    expect(
      sampleSum(webSide, 'vuln_triage_http_requests_total', {
        route: '/api/pipeline/scan',
        method: 'POST',
        status: '202',
      }),
    ).toBe(1);
  });

  it('closes the listener when the worker stops', async () => {
    expect(await worker.stop('SIGTERM')).toBe(0);
    await expect(fetch(metricsUrl)).rejects.toThrow();
  });
});
