import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { parseScanToArray } from '../../../src/parsers/index.js';

/**
 * docs/ingestion.md#asset-context: findings without a host of their own (here SARIF) belong to the
 * asset the upload names, in their label and in their case identity.
 */
const FIXTURES = path.resolve('test/fixtures/scans');
const sarif = readFileSync(path.join(FIXTURES, 'sarif/flawfinder.sarif'));
const openvas = readFileSync(path.join(FIXTURES, 'openvas/one_vuln.xml'));
/** Read from the file independently of the parser. */
const RESULTS = (JSON.parse(sarif.toString('utf8')) as { runs: { results: unknown[] }[] }).runs.reduce(
  (n, r) => n + r.results.length,
  0,
);

interface Counts {
  findings: number;
  new: number;
  duplicate: number;
}
interface FindingView {
  id: string;
  scanId: string;
  caseId: string;
  fingerprint: string;
  asset: { name: string | null; host: string | null; file: string | null };
}
interface CaseView {
  id: string;
  fingerprint: string;
  sightings: number;
  asset: { name: string | null };
}

let t: ScanTestApp;
let key: string;
const scans: Record<string, { scanId: string; counts: Counts }> = {};

async function upload(
  body: Buffer,
  query: string,
  contentType = 'application/json',
): Promise<{ scanId: string; counts: Counts }> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/pipeline/scan${query}`,
    headers: { 'x-api-key': key, 'content-type': contentType },
    payload: body,
  });
  expect(res.statusCode).toBe(202);
  const scanId = (res.json() as { scanId: string }).scanId;
  const done = await waitForScan(t.app, key, scanId);
  expect(done.status).toBe('completed');
  return { scanId, counts: done.counts as Counts };
}

async function list<T>(url: string): Promise<T[]> {
  const res = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
  expect(res.statusCode).toBe(200);
  const body = res.json() as { data: T[]; nextCursor: string | null };
  expect(body.nextCursor).toBeNull();
  return body.data;
}

beforeAll(async () => {
  t = await startScanApp();
  key = (await signUp(t.app)).key;
});
afterAll(async () => {
  await t?.close();
});

describe("an upload's asset= attributes hostless findings to that asset", () => {
  it('the same SARIF file from app-a and app-b is two sets of cases; app-a again is all duplicates', async () => {
    scans.a1 = await upload(sarif, '?asset=app-a');
    scans.b = await upload(sarif, '?asset=app-b');
    scans.a2 = await upload(sarif, '?asset=app-a');

    const first = scans.a1.counts;
    expect(first.findings).toBe(RESULTS);
    expect(first.new).toBeGreaterThan(0);
    expect(first.new + first.duplicate).toBe(RESULTS);
    expect(scans.b.counts).toMatchObject({ findings: RESULTS, new: first.new, duplicate: first.duplicate });
    expect(scans.a2.counts).toMatchObject({ findings: RESULTS, new: 0, duplicate: RESULTS });
    const cases = await t.infra.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM cases`);
    expect(cases.rows[0]!.n).toBe(2 * first.new);
  });

  it('the asset filter of findings and cases returns each asset’s own findings and cases', async () => {
    const casesA = await list<CaseView>('/api/v1/cases?asset=app-a&limit=200');
    const casesB = await list<CaseView>('/api/v1/cases?asset=app-b&limit=200');
    expect(casesA).toHaveLength(scans.a1!.counts.new);
    expect(casesB).toHaveLength(scans.a1!.counts.new);
    expect(casesA.every((c) => c.asset.name === 'app-a')).toBe(true);
    expect(casesB.every((c) => c.asset.name === 'app-b')).toBe(true);
    // Every sighting of both app-a uploads is on an app-a case, and none on app-b's.
    expect(casesA.reduce((n, c) => n + c.sightings, 0)).toBe(2 * RESULTS);
    expect(casesB.reduce((n, c) => n + c.sightings, 0)).toBe(RESULTS);
    const fingerprintsA = new Set(casesA.map((c) => c.fingerprint));
    expect(casesB.some((c) => fingerprintsA.has(c.fingerprint))).toBe(false);

    const findingsA = await list<FindingView>('/api/v1/findings?asset=app-a&limit=200');
    expect(findingsA).toHaveLength(2 * RESULTS);
    expect(new Set(findingsA.map((f) => f.scanId))).toEqual(new Set([scans.a1!.scanId, scans.a2!.scanId]));
    expect(findingsA.every((f) => f.asset.name === 'app-a' && fingerprintsA.has(f.fingerprint))).toBe(true);
    // The file stays on the finding: only the label and the identity changed.
    expect(findingsA.some((f) => f.asset.file !== null)).toBe(true);
    const caseIdsA = new Set(casesA.map((c) => c.id));
    expect(findingsA.every((f) => caseIdsA.has(f.caseId))).toBe(true);

    const findingsB = await list<FindingView>('/api/v1/findings?asset=app-b&limit=200');
    expect(findingsB).toHaveLength(RESULTS);
    expect(findingsB.every((f) => f.scanId === scans.b!.scanId && f.asset.name === 'app-b')).toBe(true);
    expect(await list(`/api/v1/findings?asset=app-a&scan=${scans.b!.scanId}`)).toEqual([]);
    expect(await list(`/api/v1/cases?asset=app-b&scan=${scans.b!.scanId}&limit=200`)).toHaveLength(
      casesB.length,
    );
  });

  it('without asset= the same file is a third set of cases, under the parser’s own fingerprints', async () => {
    const plain = await upload(sarif, '');
    expect(plain.counts).toMatchObject({ findings: RESULTS, new: scans.a1!.counts.new });
    const stored = await list<FindingView>(`/api/v1/findings?scan=${plain.scanId}&limit=200`);
    const parsed = (await parseScanToArray(Readable.from([sarif]))).findings;
    expect(new Set(stored.map((f) => f.fingerprint))).toEqual(new Set(parsed.map((f) => f.fingerprint)));
    expect(stored.some((f) => f.asset.name === 'app-a' || f.asset.name === 'app-b')).toBe(false);
  });

  it('a network finding keeps its own host as its asset; the upload’s asset stays on the scan', async () => {
    const scan = await upload(openvas, '?asset=app-a', 'application/xml');
    expect(scan.counts).toMatchObject({ findings: 1, new: 1 });
    const [finding] = await list<FindingView>(`/api/v1/findings?scan=${scan.scanId}`);
    expect(finding!.asset.name).not.toBe('app-a');
    expect(finding!.asset.name).toBe(finding!.asset.host);
    expect(
      (await list<FindingView>('/api/v1/findings?asset=app-a&limit=200')).some(
        (f) => f.scanId === scan.scanId,
      ),
    ).toBe(false);
    const view = await t.app.inject({
      method: 'GET',
      url: `/api/pipeline/scan/${scan.scanId}`,
      headers: { 'x-api-key': key },
    });
    expect(view.json()).toMatchObject({ asset: { name: 'app-a' } });
  });
});
