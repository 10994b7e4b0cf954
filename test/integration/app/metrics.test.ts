import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, uploadScan, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { parsePrometheus, sampleSum } from '../../helpers/prometheus.js';
import { problemDocument } from '../../helpers/problem.js';
import { startScanIngestWorker } from '../../../src/workers/scan-ingest-worker.js';
import { timedQueueKit } from '../../../src/jobs/timed-queue-kit.js';
import { startMetricsServer } from '../../../src/workers/metrics-server.js';

const nessus = readFileSync(path.resolve('test/fixtures/scans/nessus/nessus_v_unknown.xml'));
const NESSUS_ITEMS = (nessus.toString('utf8').match(/<ReportItem /g) ?? []).length;
const TOKEN = 'metrics-token-for-tests-0123456789';

let t: ScanTestApp;
let key: string;
let worker: { close(): Promise<void> };

beforeAll(async () => {
  t = await startScanApp({ worker: false, env: { METRICS_TOKEN: TOKEN } });
  // The worker wiring of `startWorkers`: timed queue kit and scan observer on the process's metrics.
  const pm = t.deps.processMetrics;
  worker = startScanIngestWorker({
    queues: timedQueueKit(t.infra.queues, pm.jobs),
    pool: t.infra.pool,
    logger: t.deps.logger,
    config: t.deps.config,
    storage: t.storage,
    observer: pm.scans,
  });
  key = (await signUp(t.app)).key;
});
afterAll(async () => {
  await worker?.close();
  await t?.close();
});

const scrape = async () => {
  const res = await t.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(res.body);
};

describe('GET /metrics on the web process', () => {
  it('counts a triage and a scan upload, by route pattern, tier, format and queue', async () => {
    const before = await scrape();
    const triage = await t.app.inject({
      method: 'POST',
      url: '/api/v1/triage',
      headers: { 'x-api-key': key },
      payload: { cveIds: ['CVE-2021-44228'], title: 'Log4Shell in billing-api', severity: 'CRITICAL' },
    });
    expect(triage.statusCode).toBe(200);
    const upload = await uploadScan(t.app, key, nessus);
    expect(upload.statusCode).toBe(202);
    const { scanId } = upload.json() as { scanId: string };
    const scan = await waitForScan(t.app, key, scanId);
    expect(scan.status).toBe('completed');
    const after = await scrape();

    const moved = (name: string, labels: Record<string, string> = {}) =>
      sampleSum(after, name, labels) - sampleSum(before, name, labels);
    expect(
      moved('vuln_triage_http_requests_total', { route: '/api/v1/triage', method: 'POST', status: '200' }),
    ).toBe(1);
    expect(
      moved('vuln_triage_http_requests_total', {
        route: '/api/pipeline/scan',
        method: 'POST',
        status: '202',
      }),
    ).toBe(1);
    expect(
      moved('vuln_triage_http_requests_total', { route: '/api/pipeline/scan/:id', method: 'GET' }),
    ).toBeGreaterThan(0);
    // Raw URLs never become label values.
    expect(after.some((s) => s.labels.route?.includes(scanId))).toBe(false);
    expect(moved('vuln_triage_http_request_duration_seconds_count', { route: '/api/v1/triage' })).toBe(1);
    expect(moved('vuln_triage_triage_answers_total')).toBe(1);
    expect(moved('vuln_triage_provider_latency_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(moved('vuln_triage_scans_total', { format: 'nessus', outcome: 'completed' })).toBe(1);
    expect(moved('vuln_triage_scan_bytes_parsed_total', { format: 'nessus' })).toBe(nessus.length);
    expect(moved('vuln_triage_scan_findings_parsed_total', { format: 'nessus' })).toBe(NESSUS_ITEMS);
    expect(
      moved('vuln_triage_job_duration_seconds_count', { queue: 'scan-ingest', outcome: 'completed' }),
    ).toBe(1);
    // Two requests with the same key: the second is served by the process's key cache.
    expect(moved('vuln_triage_key_cache_lookups_total', { result: 'hit' })).toBeGreaterThan(0);
    // Queue depth is read from the backend at scrape time, for every queue of the service.
    for (const queue of ['scan-ingest', 'triage', 'exports', 'maintenance', 'enrichment-refresh'])
      for (const state of ['waiting', 'active', 'delayed', 'failed'])
        expect(
          after.some(
            (s) =>
              s.name === 'vuln_triage_queue_jobs' && s.labels.queue === queue && s.labels.state === state,
          ),
        ).toBe(true);
    expect(after.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
  });

  it('refuses a scrape without the token, or with another one, with a 401 problem document', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token' }, { authorization: TOKEN }]) {
      const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
      expect(res.statusCode).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(res.json()).toEqual(
        problemDocument(
          401,
          'unauthenticated',
          'Not signed in',
          'Scraping metrics needs `Authorization: Bearer <METRICS_TOKEN>`.',
        ),
      );
      expect(res.body).not.toContain('vuln_triage_');
    }
  });
});

describe('the worker process metrics listener', () => {
  it('serves the same registry over plain HTTP, behind the same token', async () => {
    const server = await startMetricsServer({
      port: 0,
      host: '127.0.0.1',
      token: TOKEN,
      scrape: () => t.deps.processMetrics.http.scrape(),
    });
    try {
      const url = `http://127.0.0.1:${server.port}/metrics`;
      const refused = await fetch(url);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({
        type: 'https://docs.vulntriage.dev/errors/unauthenticated',
        title: 'Not signed in',
        status: 401,
        code: 'unauthenticated',
        detail: 'Scraping metrics needs `Authorization: Bearer <METRICS_TOKEN>`.',
      });
      const ok = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(ok.status).toBe(200);
      expect(sampleSum(parsePrometheus(await ok.text()), 'vuln_triage_scans_total')).toBeGreaterThanOrEqual(
        1,
      );
      expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
