import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueBackends } from '../../helpers/db.js';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';

const FIXTURES = path.resolve('test/fixtures/scans');
const nessus = readFileSync(path.join(FIXTURES, 'nessus/nessus_v_unknown.xml'));
const sarif = readFileSync(path.join(FIXTURES, 'sarif/bash-report.sarif'));

/** Expected values read from the file with regexes, independently of the parser. */
const NESSUS_ITEMS = [...nessus.toString('utf8').matchAll(/<ReportItem [^>]*severity="(\d)"/g)].map(
  (m) => m[1],
);
const NESSUS_BY_SEVERITY = {
  CRITICAL: NESSUS_ITEMS.filter((s) => s === '4').length,
  HIGH: NESSUS_ITEMS.filter((s) => s === '3').length,
  MEDIUM: NESSUS_ITEMS.filter((s) => s === '2').length,
  LOW: NESSUS_ITEMS.filter((s) => s === '1').length,
  INFO: NESSUS_ITEMS.filter((s) => s === '0').length,
};
const SARIF_RESULTS = (JSON.parse(sarif.toString('utf8')) as { runs: { results: unknown[] }[] }).runs.reduce(
  (n, r) => n + r.results.length,
  0,
);

const backends = queueBackends('scans/ingest-happy');

describe.each(backends)('scan ingestion end to end on $name', ({ name, redisUrl }) => {
  const skip = name === 'Redis' && !redisUrl;
  let t: ScanTestApp;
  let key: string;

  beforeAll(async () => {
    if (skip) return;
    t = await startScanApp({ redisUrl });
    key = (await signUp(t.app)).key;
  });
  afterAll(async () => {
    await t?.close();
  });

  const upload = (body: Buffer | string, headers: Record<string, string> = {}, query = '') =>
    t.app.inject({
      method: 'POST',
      url: `/api/pipeline/scan${query}`,
      headers: { 'x-api-key': key, 'content-type': 'application/xml', ...headers },
      payload: body,
    });

  it.skipIf(skip)(
    'stores a Nessus upload, answers 202 at once, and completes with the counts of the file',
    async () => {
      const res = await upload(
        nessus,
        {},
        '?name=nightly&asset=dc1&environment=PRODUCTION&internetExposed=true',
      );
      expect(res.statusCode).toBe(202);
      const { scanId, status, statusUrl } = res.json() as {
        scanId: string;
        status: string;
        statusUrl: string;
      };
      expect(status).toBe('queued');
      expect(statusUrl).toBe(`/api/pipeline/scan/${scanId}`);

      const done = await waitForScan(t.app, key, scanId);
      expect(done).toMatchObject({
        scanId,
        name: 'nightly',
        status: 'completed',
        format: 'nessus',
        bytes: nessus.length,
        bytesParsed: nessus.length,
        progress: 1,
        error: null,
        asset: { name: 'dc1', environment: 'PRODUCTION', criticality: null, internetExposed: true },
        counts: {
          findings: NESSUS_ITEMS.length,
          new: NESSUS_ITEMS.length,
          duplicate: 0,
          bySeverity: NESSUS_BY_SEVERITY,
        },
      });
      expect(NESSUS_ITEMS.length).toBe(296);

      const cases = await t.app.inject({
        method: 'GET',
        url: `/api/v1/cases?scan=${scanId}&limit=200`,
        headers: { 'x-api-key': key },
      });
      expect(cases.statusCode).toBe(200);
      const page1 = cases.json() as { object: string; data: unknown[]; nextCursor: string };
      expect(page1.object).toBe('list');
      expect(page1.data).toHaveLength(200);
      const page2 = await t.app.inject({
        method: 'GET',
        url: `/api/v1/cases?scan=${scanId}&limit=200&cursor=${page1.nextCursor}`,
        headers: { 'x-api-key': key },
      });
      expect((page2.json() as { data: unknown[]; nextCursor: null }).data).toHaveLength(96);
      expect(page2.json().nextCursor).toBeNull();
    },
  );

  it.skipIf(skip)(
    'the same file again: every finding is a duplicate, no new case, sightings grow',
    async () => {
      const res = await upload(nessus);
      const done = await waitForScan(t.app, key, res.json().scanId);
      expect(done.counts).toMatchObject({ findings: 296, new: 0, duplicate: 296 });
      const cases = await t.app.inject({
        method: 'GET',
        url: '/api/v1/cases?limit=1',
        headers: { 'x-api-key': key },
      });
      expect(cases.json().data[0].sightings).toBe(2);
      const count = await t.infra.pool.query(`SELECT count(*)::int AS n FROM cases`);
      expect(count.rows[0].n).toBe(296);
    },
  );

  it.skipIf(skip)(
    'a gzip-compressed body (Content-Encoding: gzip) is stored decompressed and parsed',
    async () => {
      const res = await upload(gzipSync(sarif), {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      });
      expect(res.statusCode).toBe(202);
      const done = await waitForScan(t.app, key, res.json().scanId);
      expect(done).toMatchObject({ status: 'completed', format: 'sarif', bytes: sarif.length });
      // bash-report.sarif repeats rules on the same lines: fewer cases than results.
      expect((done.counts as { findings: number }).findings).toBe(SARIF_RESULTS);
      const c = done.counts as { findings: number; new: number; duplicate: number };
      expect(c.new + c.duplicate).toBe(c.findings);
      expect(c.new).toBeLessThan(c.findings);
    },
  );

  it.skipIf(skip)('a multipart upload in the field "file"', async () => {
    const boundary = '----scanboundary';
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="one.xml"\r\nContent-Type: application/xml\r\n\r\n`,
      ),
      readFileSync(path.join(FIXTURES, 'openvas/one_vuln.xml')),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const res = await upload(
      body,
      { 'content-type': `multipart/form-data; boundary=${boundary}` },
      '?format=openvas',
    );
    expect(res.statusCode).toBe(202);
    const done = await waitForScan(t.app, key, res.json().scanId);
    expect(done).toMatchObject({
      status: 'completed',
      format: 'openvas',
      counts: { findings: 1, new: 1, duplicate: 0 },
    });
  });

  it.skipIf(skip)('Idempotency-Key: the same body returns the same scan; another body is 409', async () => {
    const file = readFileSync(path.join(FIXTURES, 'qualys/qualys_infrascan_webgui_multiple.xml'));
    const first = await upload(file, { 'idempotency-key': 'ci-run-42' });
    expect(first.statusCode).toBe(202);
    const again = await upload(file, { 'idempotency-key': 'ci-run-42' });
    expect(again.statusCode).toBe(202);
    expect(again.json().scanId).toBe(first.json().scanId);
    const other = await upload(nessus, { 'idempotency-key': 'ci-run-42' });
    expect(other.statusCode).toBe(409);
    expect(other.json()).toEqual({
      type: 'https://docs.vulntriage.dev/errors/idempotency_conflict',
      title: 'Idempotency conflict',
      status: 409,
      code: 'idempotency_conflict',
      detail: 'This Idempotency-Key was already used with a different file.',
      requestId: expect.any(String),
    });
    const done = await waitForScan(t.app, key, first.json().scanId);
    expect(done).toMatchObject({ status: 'completed', format: 'qualys', counts: { findings: 20 } });
    const scans = await t.infra.pool.query(
      `SELECT count(*)::int AS n FROM scans WHERE idempotency_key = 'ci-run-42'`,
    );
    expect(scans.rows[0].n).toBe(1);
  });

  it.skipIf(skip)(
    'lists scans, findings and cases with filters, and reads a case with its evidence',
    async () => {
      const scans = await t.app.inject({
        method: 'GET',
        url: '/api/v1/scans?limit=2',
        headers: { 'x-api-key': key },
      });
      expect(scans.json()).toMatchObject({
        object: 'list',
        data: [expect.any(Object), expect.any(Object)],
        nextCursor: expect.any(String),
      });

      const medium = await t.app.inject({
        method: 'GET',
        url: '/api/v1/findings?severity=MEDIUM&limit=200',
        headers: { 'x-api-key': key },
      });
      const mediumFindings = medium.json().data as { severity: string }[];
      expect(mediumFindings.every((f) => f.severity === 'MEDIUM')).toBe(true);
      expect(mediumFindings.length).toBeGreaterThanOrEqual(2 * NESSUS_BY_SEVERITY.MEDIUM);

      const withCve = (
        await t.app.inject({
          method: 'GET',
          url: '/api/v1/findings?limit=200',
          headers: { 'x-api-key': key },
        })
      )
        .json()
        .data.find((f: { cveIds: string[] }) => f.cveIds.length > 0) as
        { cveIds: string[]; caseId: string } | undefined;
      expect(withCve).toBeDefined();
      const byCve = await t.app.inject({
        method: 'GET',
        url: `/api/v1/cases?cve=${withCve!.cveIds[0]}`,
        headers: { 'x-api-key': key },
      });
      expect(
        (byCve.json().data as { cveIds: string[] }[]).every((c) => c.cveIds.includes(withCve!.cveIds[0]!)),
      ).toBe(true);

      const detail = await t.app.inject({
        method: 'GET',
        url: `/api/v1/cases/${withCve!.caseId}`,
        headers: { 'x-api-key': key },
      });
      expect(detail.statusCode).toBe(200);
      const c = detail.json() as {
        status: string;
        evidence: { rawExcerpt: string; scanId: string }[];
        history: unknown[];
      };
      expect(c.status).toBe('open');
      expect(c.evidence.length).toBeGreaterThanOrEqual(1);
      expect(c.evidence[0]!.rawExcerpt.length).toBeGreaterThan(0);
      expect(c.history).toEqual([]);
    },
  );

  it.skipIf(skip)('PATCH a case status records the change in its history', async () => {
    const first = (
      await t.app.inject({ method: 'GET', url: '/api/v1/cases?limit=1', headers: { 'x-api-key': key } })
    ).json().data[0] as { id: string };
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/cases/${first.id}`,
      headers: { 'x-api-key': key },
      payload: {
        status: 'risk_accepted',
        note: 'Compensating control in place.',
        expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: first.id,
      status: 'risk_accepted',
      history: [
        {
          from: 'open',
          to: 'risk_accepted',
          actor: expect.stringMatching(/^key:/),
          note: 'Compensating control in place.',
          at: expect.any(String),
        },
      ],
    });
    const filtered = await t.app.inject({
      method: 'GET',
      url: '/api/v1/cases?status=risk_accepted',
      headers: { 'x-api-key': key },
    });
    expect(filtered.json().data.map((c: { id: string }) => c.id)).toEqual([first.id]);
    const bad = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/cases/${first.id}`,
      headers: { 'x-api-key': key },
      payload: { status: 'closed' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual([
      {
        path: '/status',
        message: 'must be one of open, in_progress, resolved, risk_accepted, false_positive',
      },
    ]);
  });
});
