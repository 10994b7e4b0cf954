/* eslint-disable @typescript-eslint/no-explicit-any -- assertions walk parsed JSON documents */
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { cycloneDx16Validator, sarifValidator } from '../../helpers/export-schemas.js';
import { EXPORT_QUEUE, exportProcessor, type ExportPayload } from '../../../src/jobs/export-job.js';

/** Case and finding exports (docs/exports.md): every format of every fixture scan, jobs, signed links, isolation. */
const FIXTURES = path.resolve('test/fixtures/scans');
const SCANS: [string, string][] = [
  ['sarif/bash-report.sarif', 'application/sarif+json'],
  ['nessus/nessus_many_vuln.xml', 'application/xml'],
  ['openvas/many_vuln.xml', 'application/xml'],
  ['qualys/Qualys_Sample_Report.xml', 'application/xml'],
  ['cyclonedx/valid-vulnerability-1.4.json', 'application/json'],
];
const HOSTILE_CLI = {
  tool: { name: 'acme-scan', version: '1.0' },
  findings: [
    {
      title: '=HYPERLINK("http://evil.test","x")',
      severity: 'high',
      cveIds: [],
      asset: 'app-1',
      ruleId: 'EVIL-1',
    },
    { title: 'Plain finding', severity: 'low', cveIds: [], asset: '@app-2', ruleId: 'PLAIN-1' },
  ],
};

/** Above the largest fixture scan's case count (Qualys, 301), below the workspace's (367). */
const SYNC_MAX = 350;

let t: ScanTestApp;
let key: string;
let otherKey: string;
let worker: { close(): Promise<void> } | undefined;
const scanIds: string[] = [];
const validateSarif = sarifValidator();
const validateVex = cycloneDx16Validator();

const get = (url: string, k: string | null = key) =>
  t.app.inject({ method: 'GET', url, headers: k ? { 'x-api-key': k } : {} });

async function caseIds(query: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor = '';
  for (;;) {
    const res = await get(`/api/v1/cases?limit=200${query}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.statusCode).toBe(200);
    const page = res.json() as { data: { id: string }[]; nextCursor: string | null };
    ids.push(...page.data.map((c) => c.id));
    if (!page.nextCursor) return ids.sort();
    cursor = encodeURIComponent(page.nextCursor);
  }
}

async function upload(k: string, body: Buffer | string, contentType: string, query = ''): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/pipeline/scan${query}`,
    headers: { 'x-api-key': k, 'content-type': contentType },
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(202);
  const id = (res.json() as { scanId: string }).scanId;
  expect((await waitForScan(t.app, k, id)).status).toBe('completed');
  return id;
}

/** The case ids an export names, whatever its format. */
function exportedIds(format: string, body: string): string[] {
  switch (format) {
    case 'csv':
      return (parseCsv(body, { columns: true }) as { id: string }[]).map((r) => r.id).sort();
    case 'jsonl':
      return body
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { id: string }).id)
        .sort();
    case 'sarif': {
      const log = JSON.parse(body) as { runs: { results: { properties: { caseId: string } }[] }[] };
      expect(validateSarif(log), JSON.stringify(validateSarif.errors?.slice(0, 3))).toBe(true);
      return log.runs[0]!.results.map((r) => r.properties.caseId).sort();
    }
    default: {
      const bom = JSON.parse(body) as {
        vulnerabilities: { properties: { name: string; value: string }[] }[];
      };
      expect(validateVex(bom), JSON.stringify(validateVex.errors?.slice(0, 3))).toBe(true);
      return bom.vulnerabilities
        .map((v) => v.properties.find((p) => p.name === 'vuln-triage:caseId')!.value)
        .sort();
    }
  }
}

beforeAll(async () => {
  t = await startScanApp({ env: { EXPORT_SYNC_MAX_ROWS: String(SYNC_MAX) } });
  worker = t.infra.queues.worker<ExportPayload, void>(EXPORT_QUEUE, exportProcessor(t.deps.exports));
  key = (await signUp(t.app)).key;
  otherKey = (await signUp(t.app)).key;
  for (const [file, type] of SCANS)
    scanIds.push(await upload(key, readFileSync(path.join(FIXTURES, file)), type));
  scanIds.push(await upload(key, JSON.stringify(HOSTILE_CLI), 'application/json', '?format=cli'));
  await upload(otherKey, readFileSync(path.join(FIXTURES, SCANS[0]![0])), SCANS[0]![1]);
}, 120_000);
afterAll(async () => {
  await worker?.close();
  await t?.close();
});

describe('GET /api/v1/exports/cases', () => {
  it.each(['csv', 'jsonl', 'sarif', 'cyclonedx-vex'])(
    'exports exactly the cases of each fixture scan as %s, valid against the official schema',
    async (format) => {
      for (const scanId of scanIds) {
        const res = await get(`/api/v1/exports/cases?format=${format}&scan=${scanId}`);
        expect(res.statusCode, res.body).toBe(200);
        expect(res.headers['content-disposition']).toMatch(/^attachment; filename="cases-/);
        const want = await caseIds(`&scan=${scanId}`);
        expect(want.length).toBeGreaterThan(0);
        expect(exportedIds(format, res.body)).toEqual(want);
      }
    },
  );

  it('respects every list filter', async () => {
    const qualys = `&scan=${scanIds[3]}`;
    for (const q of [
      '&severity=CRITICAL,HIGH',
      `&status=open${qualys}`,
      `&kev=false${qualys}`,
      '&asset=app-1',
      '&cve=CVE-2014-6271',
    ]) {
      const res = await get(`/api/v1/exports/cases?format=jsonl${q}`);
      expect(res.statusCode, q).toBe(200);
      expect(exportedIds('jsonl', res.body)).toEqual(await caseIds(q));
    }
  });

  it('neutralises spreadsheet formulas in CSV cells', async () => {
    const res = await get(`/api/v1/exports/cases?format=csv&scan=${scanIds[scanIds.length - 1]}`);
    const rows = parseCsv(res.body, { columns: true }) as { title: string; asset: string }[];
    const titles = rows.map((r) => r.title).sort();
    expect(titles).toEqual([`'=HYPERLINK("http://evil.test","x")`, 'Plain finding']);
    expect(rows.map((r) => r.asset).sort()).toEqual([`'@app-2`, 'app-1']);
  });

  it('never includes another workspace’s cases', async () => {
    const mine = exportedIds(
      'jsonl',
      (await get('/api/v1/exports/cases?format=jsonl&scan=' + scanIds[0])).body,
    );
    const theirs = exportedIds('jsonl', (await get('/api/v1/exports/cases?format=jsonl', otherKey)).body);
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.filter((id) => mine.includes(id))).toEqual([]);
  });

  it('answers 413 above EXPORT_SYNC_MAX_ROWS, pointing at an export job', async () => {
    expect((await caseIds('')).length).toBeGreaterThan(SYNC_MAX);
    const res = await get('/api/v1/exports/cases?format=csv');
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'payload_too_large', status: 413 });
    expect((res.json() as { detail: string }).detail).toContain('POST /api/v1/exports');
  });

  it('refuses a missing or unknown format, an unknown filter, no key and a key without scans:read', async () => {
    const missing = await get('/api/v1/exports/cases');
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({
      code: 'invalid_request',
      errors: [expect.objectContaining({ path: expect.stringContaining('format') })],
    });
    expect((await get('/api/v1/exports/cases?format=pdf')).statusCode).toBe(400);
    expect((await get('/api/v1/exports/cases?format=csv&colour=red')).statusCode).toBe(400);
    expect((await get('/api/v1/exports/cases?format=csv&severity=URGENT')).statusCode).toBe(400);
    expect((await get('/api/v1/exports/cases?format=csv', null)).json()).toMatchObject({
      code: 'missing_api_key',
    });
    const session = await signUp(t.app);
    const uploadOnly = await createKey(t.app, session, ['scans:write']);
    const res = await get('/api/v1/exports/cases?format=csv', uploadOnly.key);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'insufficient_scope' });
  });
});

describe('GET /api/v1/exports/findings', () => {
  it('exports the findings of a scan as CSV and JSON Lines, and refuses SARIF', async () => {
    const list = await get(`/api/v1/findings?limit=200&scan=${scanIds[0]}`);
    const want = (list.json() as { data: { id: string }[] }).data.map((f) => f.id).sort();
    const csv = await get(`/api/v1/exports/findings?format=csv&scan=${scanIds[0]}`);
    expect((parseCsv(csv.body, { columns: true }) as { id: string }[]).map((r) => r.id).sort()).toEqual(want);
    const jsonl = await get(`/api/v1/exports/findings?format=jsonl&scan=${scanIds[0]}`);
    expect(exportedIds('jsonl', jsonl.body)).toEqual(want);
    expect((await get('/api/v1/exports/findings?format=sarif')).statusCode).toBe(400);
  });
});

describe('export jobs', () => {
  const post = (payload: unknown, k = key) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/exports',
      headers: { 'x-api-key': k },
      payload: payload as object,
    });

  async function finished(id: string): Promise<Record<string, any>> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await get(`/api/v1/exports/${id}`);
      expect(res.statusCode).toBe(200);
      const body = res.json() as Record<string, any>;
      if (body.status === 'completed' || body.status === 'failed') return body;
      if (Date.now() > deadline) throw new Error(`export ${id} still ${body.status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('renders a job, serves it through a signed link without the API key, then 410 after 24 h', async () => {
    const res = await post({ format: 'cyclonedx-vex', filter: { severity: ['CRITICAL', 'HIGH', 'MEDIUM'] } });
    expect(res.statusCode, res.body).toBe(202);
    const created = res.json() as { id: string; status: string; statusUrl: string; downloadUrl: null };
    expect(created).toMatchObject({
      status: 'queued',
      downloadUrl: null,
      statusUrl: `/api/v1/exports/${created.id}`,
    });
    const done = await finished(created.id);
    expect(done.status).toBe('completed');
    const want = await caseIds('&severity=CRITICAL,HIGH,MEDIUM');
    expect(done.rowsWritten).toBe(want.length);
    const url = new URL(done.downloadUrl as string);
    const file = await t.app.inject({ method: 'GET', url: url.pathname + url.search });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toContain('application/vnd.cyclonedx+json');
    expect(exportedIds('cyclonedx-vex', file.body)).toEqual(want);

    const tampered = url.pathname + url.search.replace(/sig=./, (m) => (m.endsWith('A') ? 'sig=B' : 'sig=A'));
    expect((await t.app.inject({ method: 'GET', url: tampered })).json()).toMatchObject({
      status: 404,
      code: 'not_found',
    });
    const later = url.search.replace(/expires=(\d+)/, (_m, e: string) => `expires=${Number(e) + 3600}`);
    expect((await t.app.inject({ method: 'GET', url: url.pathname + later })).statusCode).toBe(404);

    t.clock.advance(24 * 3600 * 1000 + 1000);
    const gone = await t.app.inject({ method: 'GET', url: url.pathname + url.search });
    expect(gone.statusCode).toBe(410);
    expect(gone.json()).toMatchObject({ code: 'link_expired' });
    expect(
      ((await get(`/api/v1/exports/${created.id}`)).json() as { downloadUrl: unknown }).downloadUrl,
    ).toBeNull();

    expect(await t.deps.exports.sweepExpired()).toBeGreaterThanOrEqual(1);
    expect((await get(`/api/v1/exports/${created.id}`)).statusCode).toBe(404);
    const left = await readdir(t.storageDir, { recursive: true });
    expect(left.filter((f) => String(f).includes(created.id))).toEqual([]);
  });

  it('keeps export ids to their workspace and validates the body', async () => {
    const res = await post({ format: 'csv', subject: 'findings' });
    expect(res.statusCode).toBe(202);
    const id = (res.json() as { id: string }).id;
    expect((await get(`/api/v1/exports/${id}`, otherKey)).json()).toMatchObject({
      status: 404,
      code: 'not_found',
    });
    expect((await get('/api/v1/exports/not-a-uuid')).statusCode).toBe(404);
    expect((await post({ format: 'sarif', subject: 'findings' })).json()).toMatchObject({
      code: 'invalid_request',
      errors: [{ path: '/format', message: 'must be csv or jsonl when subject is findings' }],
    });
    expect((await post({ format: 'csv', filter: { severity: 'HIGH' } })).statusCode).toBe(400);
    expect((await post({ format: 'csv', extra: 1 })).statusCode).toBe(400);
    expect((await post({})).statusCode).toBe(400);
    expect((await finished(id)).status).toBe('completed');
  });
});
