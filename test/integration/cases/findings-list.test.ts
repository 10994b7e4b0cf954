import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';

/** `GET /api/v1/findings`: the status filter (a finding's status is its case's) and cursor paging (docs/cases.md#lists-and-filters). */
const FIXTURES = path.resolve('test/fixtures/scans');
// bash-report.sarif repeats rules on the same lines: several findings share a case.
const sarif = readFileSync(path.join(FIXTURES, 'sarif/bash-report.sarif'));
const RESULTS = (JSON.parse(sarif.toString('utf8')) as { runs: { results: unknown[] }[] }).runs.reduce(
  (n, r) => n + r.results.length,
  0,
);

interface FindingView {
  id: string;
  caseId: string;
}
interface Page {
  object: string;
  data: FindingView[];
  nextCursor: string | null;
}

let t: ScanTestApp;
let key: string;

const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
async function ids(url: string): Promise<string[]> {
  const res = await get(url);
  expect(res.statusCode).toBe(200);
  const page = res.json() as Page;
  expect(page.nextCursor).toBeNull();
  return page.data.map((f) => f.id).sort();
}

beforeAll(async () => {
  t = await startScanApp();
  key = (await signUp(t.app)).key;
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/pipeline/scan',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    payload: sarif,
  });
  const done = await waitForScan(t.app, key, (res.json() as { scanId: string }).scanId);
  expect(done.counts).toMatchObject({ findings: RESULTS });
});
afterAll(async () => {
  await t?.close();
});

describe('GET /api/v1/findings?status=', () => {
  it("filters findings by their case's status, following a PATCH of the case", async () => {
    const all = ((await get('/api/v1/findings?limit=200')).json() as Page).data;
    expect(all).toHaveLength(RESULTS);
    expect(await ids('/api/v1/findings?status=open&limit=200')).toEqual(all.map((f) => f.id).sort());

    // The case with the most findings, so the filter is seen to return every sighting.
    const perCase = new Map<string, string[]>();
    for (const f of all) perCase.set(f.caseId, [...(perCase.get(f.caseId) ?? []), f.id]);
    const [caseId, sightings] = [...perCase].sort((a, b) => b[1].length - a[1].length)[0]!;
    expect(sightings.length).toBeGreaterThan(1);
    const patch = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/cases/${caseId}`,
      headers: { 'x-api-key': key },
      payload: { status: 'in_progress' },
    });
    expect(patch.statusCode).toBe(200);

    expect(await ids('/api/v1/findings?status=in_progress&limit=200')).toEqual([...sightings].sort());
    const open = await ids('/api/v1/findings?status=open&limit=200');
    expect(open).toHaveLength(RESULTS - sightings.length);
    expect(open.some((id) => sightings.includes(id))).toBe(false);
    expect(await ids('/api/v1/findings?status=open,in_progress&limit=200')).toHaveLength(RESULTS);
    expect(await ids('/api/v1/findings?status=resolved')).toEqual([]);
    expect(await ids(`/api/v1/findings?status=in_progress&case=${caseId}&limit=200`)).toEqual(
      [...sightings].sort(),
    );
  });

  it('rejects an unknown status with a problem document', async () => {
    const res = await get('/api/v1/findings?status=closed');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      type: 'https://docs.vulntriage.dev/errors/invalid_request',
      title: 'Invalid request',
      status: 400,
      code: 'invalid_request',
      detail: 'The request has invalid fields; see errors.',
      errors: [
        {
          path: '/querystring/status',
          message:
            'must be one or more of open, in_progress, resolved, risk_accepted, false_positive, separated by commas',
        },
      ],
      requestId: expect.any(String),
    });
  });
});

describe('GET /api/v1/findings cursor paging', () => {
  it('walks every finding newest first across pages, each once, and ends with a null nextCursor', async () => {
    const limit = 10;
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(`/api/v1/findings?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const page = res.json() as Page;
      expect(page.object).toBe('list');
      sizes.push(page.data.length);
      seen.push(...page.data.map((f) => f.id));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(sizes).toEqual([10, 10, RESULTS - 20]);
    expect(new Set(seen).size).toBe(RESULTS);
    const unpaged = ((await get('/api/v1/findings?limit=200')).json() as Page).data.map((f) => f.id);
    expect(seen).toEqual(unpaged);
  });

  it('pages a filtered list with the filter kept on every page', async () => {
    const first = (await get('/api/v1/findings?status=open&limit=5')).json() as Page;
    expect(first.data).toHaveLength(5);
    expect(first.nextCursor).toEqual(expect.any(String));
    const rest = (
      await get(`/api/v1/findings?status=open&limit=200&cursor=${first.nextCursor}`)
    ).json() as Page;
    expect(rest.nextCursor).toBeNull();
    const all = [...first.data, ...rest.data].map((f) => f.id).sort();
    expect(all).toEqual(await ids('/api/v1/findings?status=open&limit=200'));
  });
});

describe('GET /api/v1/cases/:id/evidence', () => {
  interface EvidenceView {
    id: string;
    findingId: string;
    rawExcerpt: string;
  }
  /** The case with the most sightings and its findings' ids. */
  async function busiestCase(): Promise<[string, string[]]> {
    const all = ((await get('/api/v1/findings?limit=200')).json() as Page).data;
    const perCase = new Map<string, string[]>();
    for (const f of all) perCase.set(f.caseId, [...(perCase.get(f.caseId) ?? []), f.id]);
    return [...perCase].sort((a, b) => b[1].length - a[1].length)[0]!;
  }

  it("pages every sighting of a case once, newest first, as the case's detail starts it", async () => {
    const [caseId, sightings] = await busiestCase();
    expect(sightings.length).toBeGreaterThan(2);
    const seen: EvidenceView[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`/api/v1/cases/${caseId}/evidence?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const page = res.json() as { object: string; data: EvidenceView[]; nextCursor: string | null };
      expect(page.object).toBe('list');
      expect(page.data).toHaveLength(1);
      seen.push(...page.data);
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(sightings.length);
    expect(seen.map((e) => e.findingId).sort()).toEqual([...sightings].sort());
    expect(seen.every((e) => e.rawExcerpt.length > 0)).toBe(true);

    const detail = (await get(`/api/v1/cases/${caseId}`)).json() as {
      evidence: EvidenceView[];
      evidenceNextCursor: string | null;
    };
    expect(detail.evidence.map((e) => e.id)).toEqual(seen.map((e) => e.id));
    expect(detail.evidenceNextCursor).toBeNull();
  });

  it('is 404 for another workspace, and 400 for a tampered cursor or an unknown parameter', async () => {
    const [caseId] = await busiestCase();
    const other = await signUp(t.app);
    const foreign = await t.app.inject({
      method: 'GET',
      url: `/api/v1/cases/${caseId}/evidence`,
      headers: { 'x-api-key': other.key },
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ code: 'not_found' });
    const tampered = await get(
      `/api/v1/cases/${caseId}/evidence?cursor=${Buffer.from('{"s":"1; DROP"}').toString('base64url')}`,
    );
    expect(tampered.statusCode).toBe(400);
    expect(tampered.json()).toMatchObject({
      code: 'invalid_request',
      errors: [{ path: '/querystring/cursor' }],
    });
    const unknown = await get(`/api/v1/cases/${caseId}/evidence?order=asc`);
    expect(unknown.statusCode).toBe(400);
    expect((await get(`/api/v1/cases/${caseId}/evidence?limit=0`)).statusCode).toBe(400);
    expect((await get('/api/v1/cases/not-a-uuid/evidence')).statusCode).toBe(404);
  });
});
