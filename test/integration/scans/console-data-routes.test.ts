import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { signUp } from '../../helpers/test-app.js';
import { problemDocument } from '../../helpers/problem.js';

/**
 * The console's data routes of docs/console.md#console-json-api (`/api/console/scans`, `/cases`, `/exports`,
 * `/dashboard`) through `inject` on the real app with its scan worker: a session is required,
 * state changes need the CSRF token, bad input is a 400 naming the field, an oversized upload a
 * 413, and another workspace's ids are 404 like unknown ones.
 */
const FIXTURE = readFileSync(path.resolve('test/fixtures/parsers/cli-findings.json'));
const ID = '00000000-0000-0000-0000-000000000000';
let t: ScanTestApp;
let a: Awaited<ReturnType<typeof signUp>>;
let b: Awaited<ReturnType<typeof signUp>>;
let scanId = '';
let caseIds: string[] = [];

function multipart(file: Buffer, name = 'scan.json', field = 'file') {
  const boundary = '----console-test';
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${name}"\r\nContent-Type: application/json\r\n\r\n`,
    ),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

function as(s: { cookie: string; csrf: string }, csrf = true) {
  return { cookie: s.cookie, ...(csrf ? { 'x-csrf-token': s.csrf } : {}) };
}

function upload(s: { cookie: string; csrf: string }, file: Buffer, query = '') {
  const m = multipart(file);
  return t.app.inject({
    method: 'POST',
    url: `/api/console/scans${query}`,
    headers: { ...as(s), 'content-type': m.type },
    payload: m.body,
  });
}

beforeAll(async () => {
  t = await startScanApp({ env: { SCAN_MAX_BYTES: '4096' } });
  a = await signUp(t.app, { workspaceName: 'A' });
  b = await signUp(t.app, { workspaceName: 'B' });
});
afterAll(async () => {
  await t?.close();
});

describe('console scan routes', () => {
  it('uploads a multipart scan recorded without a key, parsed by the worker, listed newest first', async () => {
    const res = await upload(a, FIXTURE, '?name=Nightly&asset=web-01');
    expect(res.statusCode, res.body).toBe(202);
    const scan = res.json() as { id: string; keyId: string | null; name: string; status: string };
    expect(scan).toMatchObject({ keyId: null, name: 'Nightly', status: 'queued' });
    scanId = scan.id;
    expect(await waitForScan(t.app, a.key, scanId)).toMatchObject({ status: 'completed' });

    const list = await t.app.inject({ method: 'GET', url: '/api/console/scans', headers: as(a, false) });
    expect(list.statusCode).toBe(200);
    expect(list.headers['cache-control']).toBe('no-store');
    const body = list.json() as {
      data: { id: string; counts: { new: number } }[];
      nextCursor: string | null;
    };
    expect(body.data.map((s) => s.id)).toEqual([scanId]);
    expect(body.data[0]!.counts.new).toBe(3);
    const one = await t.app.inject({
      method: 'GET',
      url: `/api/console/scans/${scanId}`,
      headers: as(a, false),
    });
    expect(one.json()).toMatchObject({ id: scanId, status: 'completed', keyId: null });
  });

  it('refuses an upload without the CSRF token, without a file, not multipart, or over the plan limit', async () => {
    const m = multipart(FIXTURE);
    const noCsrf = await t.app.inject({
      method: 'POST',
      url: '/api/console/scans',
      headers: { ...as(a, false), 'content-type': m.type },
      payload: m.body,
    });
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.json()).toMatchObject({ code: 'csrf_failed' });

    const wrongField = multipart(FIXTURE, 'scan.json', 'upload');
    const noFile = await t.app.inject({
      method: 'POST',
      url: '/api/console/scans',
      headers: { ...as(a), 'content-type': wrongField.type },
      payload: wrongField.body,
    });
    expect(noFile.statusCode).toBe(400);
    expect(noFile.json()).toMatchObject({
      code: 'invalid_request',
      errors: [{ path: '/file', message: 'is required' }],
    });

    const raw = await t.app.inject({
      method: 'POST',
      url: '/api/console/scans',
      headers: { ...as(a), 'content-type': 'application/json' },
      payload: FIXTURE,
    });
    expect(raw.statusCode).toBe(415);
    expect(raw.json()).toEqual(
      problemDocument(
        415,
        'unsupported_media_type',
        'Unsupported media type',
        'Send the scan as multipart/form-data with the file in "file".',
      ),
    );

    const big = await upload(a, Buffer.alloc(5000, 0x20));
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ code: 'payload_too_large' });

    const badQuery = await upload(a, FIXTURE, '?format=word&triage=sometimes&bogus=1');
    expect(badQuery.statusCode).toBe(400);
    expect(badQuery.json()).toMatchObject({ code: 'invalid_request' });
  });

  it("answers 404 for another workspace's scan and 401 without a session", async () => {
    const other = await t.app.inject({
      method: 'GET',
      url: `/api/console/scans/${scanId}`,
      headers: as(b, false),
    });
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual(problemDocument(404, 'not_found', 'Not found', 'No such scan.'));
    const list = await t.app.inject({ method: 'GET', url: '/api/console/scans', headers: as(b, false) });
    expect((list.json() as { data: unknown[] }).data).toEqual([]);
    for (const url of [
      '/api/console/scans',
      '/api/console/cases',
      '/api/console/dashboard',
      `/api/console/cases/${ID}`,
    ]) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(401);
    }
  });
});

describe('console case routes', () => {
  it('lists the same cases as /api/v1/cases for the same filter, with counts', async () => {
    const api = await t.app.inject({
      method: 'GET',
      url: '/api/v1/cases?severity=CRITICAL,HIGH',
      headers: { 'x-api-key': a.key },
    });
    const mine = await t.app.inject({
      method: 'GET',
      url: '/api/console/cases?severity=CRITICAL,HIGH',
      headers: as(a, false),
    });
    expect(mine.statusCode).toBe(200);
    expect(mine.json()).toEqual(api.json());
    const counts = await t.app.inject({
      method: 'GET',
      url: '/api/console/cases/counts?severity=CRITICAL,HIGH',
      headers: as(a, false),
    });
    expect(counts.json()).toMatchObject({ total: 2, bySeverity: { CRITICAL: 1, HIGH: 1, LOW: 0 } });
    const all = await t.app.inject({ method: 'GET', url: '/api/console/cases', headers: as(a, false) });
    caseIds = (all.json() as { data: { id: string }[] }).data.map((c) => c.id);
    expect(caseIds).toHaveLength(3);

    const byScanner = await t.app.inject({
      method: 'GET',
      url: '/api/v1/cases?scanner=acme-scan',
      headers: { 'x-api-key': a.key },
    });
    expect((byScanner.json() as { data: unknown[] }).data).toHaveLength(3);
    const noScanner = await t.app.inject({
      method: 'GET',
      url: '/api/console/cases?scanner=nessus&epssMin=0',
      headers: as(a, false),
    });
    expect((noScanner.json() as { data: unknown[] }).data).toHaveLength(0);
    const badEpss = await t.app.inject({
      method: 'GET',
      url: '/api/console/cases?epssMin=2',
      headers: as(a, false),
    });
    expect(badEpss.statusCode).toBe(400);
    expect(badEpss.json()).toMatchObject({ errors: [{ path: '/querystring/epssMin' }] });

    const bad = await t.app.inject({
      method: 'GET',
      url: '/api/console/cases?severity=SEVERE&cve=nope&limit=0',
      headers: as(a, false),
    });
    expect(bad.statusCode).toBe(400);
    expect((bad.json() as { errors: { path: string }[] }).errors.map((e) => e.path).sort()).toEqual([
      '/querystring/cve',
      '/querystring/limit',
      '/querystring/severity',
    ]);
  });

  it('changes the status of many cases with one note, each in its own history; other workspaces untouched', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/console/cases/status',
      headers: as(a),
      payload: { status: 'in_progress', note: 'Sprint 12', caseIds: [...caseIds, ID, 'not-a-uuid'] },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ changed: 3, unchanged: 0, notFound: 2 });
    for (const id of caseIds) {
      const c = await t.app.inject({ method: 'GET', url: `/api/console/cases/${id}`, headers: as(a, false) });
      const body = c.json() as { status: string; history: { to: string; note: string; actor: string }[] };
      expect(body.status).toBe('in_progress');
      expect(body.history).toEqual([
        {
          from: 'open',
          to: 'in_progress',
          note: 'Sprint 12',
          reason: null,
          actor: expect.stringMatching(/^user:/),
          at: expect.any(String),
        },
      ]);
    }

    const byFilter = await t.app.inject({
      method: 'POST',
      url: '/api/console/cases/status',
      headers: as(a),
      payload: { status: 'resolved', filter: { severity: ['LOW'] } },
    });
    expect(byFilter.json()).toEqual({ changed: 1, unchanged: 0, notFound: 0 });

    const fromB = await t.app.inject({
      method: 'POST',
      url: '/api/console/cases/status',
      headers: as(b),
      payload: { status: 'false_positive', caseIds },
    });
    expect(fromB.json()).toEqual({ changed: 0, unchanged: 0, notFound: 3 });
  });

  it('refuses a bulk change without CSRF, with both or neither selection, too many ids or a long note', async () => {
    const url = '/api/console/cases/status';
    const noCsrf = await t.app.inject({
      method: 'POST',
      url,
      headers: as(a, false),
      payload: { status: 'open', caseIds },
    });
    expect(noCsrf.statusCode).toBe(403);
    for (const payload of [
      { status: 'open' },
      { status: 'open', caseIds, filter: {} },
      { status: 'closed', caseIds },
      { status: 'open', caseIds: [] },
      { status: 'open', caseIds: Array.from({ length: 1001 }, (_, i) => `id-${i}`) },
      { status: 'open', caseIds, note: 'x'.repeat(2001) },
      { status: 'open', filter: { severity: ['SEVERE'] } },
      { status: 'open', caseIds, extra: true },
    ]) {
      const res = await t.app.inject({ method: 'POST', url, headers: as(a), payload });
      expect(res.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_request' });
    }
  });

  it("answers 404 for another workspace's case, its evidence and its export", async () => {
    for (const url of [`/api/console/cases/${caseIds[0]}`, `/api/console/cases/${caseIds[0]}/evidence`]) {
      const res = await t.app.inject({ method: 'GET', url, headers: as(b, false) });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual(problemDocument(404, 'not_found', 'Not found', 'No such case.'));
    }
    const page = await t.app.inject({ method: 'GET', url: `/cases/${caseIds[0]}`, headers: as(b, false) });
    expect(page.statusCode).toBe(404);
    expect(page.body).not.toContain('Outdated OpenSSL');
    const mine = await t.app.inject({ method: 'GET', url: `/cases/${caseIds[0]}`, headers: as(a, false) });
    expect(mine.statusCode).toBe(200);

    const job = await t.app.inject({
      method: 'POST',
      url: '/api/console/exports',
      headers: as(a),
      payload: { format: 'csv' },
    });
    expect(job.statusCode, job.body).toBe(202);
    const id = (job.json() as { id: string }).id;
    const other = await t.app.inject({
      method: 'GET',
      url: `/api/console/exports/${id}`,
      headers: as(b, false),
    });
    expect(other.statusCode).toBe(404);
    const own = await t.app.inject({
      method: 'GET',
      url: `/api/console/exports/${id}`,
      headers: as(a, false),
    });
    expect(own.json()).toMatchObject({ id, format: 'csv' });
  });

  it('says whether a KEV catalog is loaded, so the page tells "Unknown" from "Not listed"', async () => {
    const list = await t.app.inject({
      method: 'GET',
      url: '/api/v1/cases?cve=CVE-2022-0778',
      headers: { 'x-api-key': a.key },
    });
    const caseId = (list.json().data as { id: string }[])[0]!.id;
    const detail = async () => {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/console/cases/${caseId}`,
        headers: as(a, false),
      });
      expect(res.statusCode).toBe(200);
      const body = res.json() as { cveIds: string[]; enrichment: unknown[]; kevCatalogLoaded: boolean };
      return { cveIds: body.cveIds, enrichment: body.enrichment, kevCatalogLoaded: body.kevCatalogLoaded };
    };
    // No catalog: neither CVE's KEV status is known.
    expect(await detail()).toEqual({
      cveIds: ['CVE-2022-0778', 'CVE-2023-0286'],
      enrichment: [],
      kevCatalogLoaded: false,
    });
    // A catalog without them: both are known not to be listed, though no feed has a record of them.
    await t.infra.pool.query(`INSERT INTO kev_entries (cve_id) VALUES ('CVE-1999-0001')`);
    try {
      expect(await detail()).toEqual({
        cveIds: ['CVE-2022-0778', 'CVE-2023-0286'],
        enrichment: [],
        kevCatalogLoaded: true,
      });
    } finally {
      await t.infra.pool.query(`DELETE FROM kev_entries WHERE cve_id = 'CVE-1999-0001'`);
    }
  });

  it('streams a small export and answers the dashboard', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/console/exports/cases?format=jsonl&severity=CRITICAL',
      headers: as(a, false),
    });
    expect(res.statusCode).toBe(200);
    const rows = res.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { severity: string });
    expect(rows.map((r) => r.severity)).toEqual(['CRITICAL']);
    const bad = await t.app.inject({
      method: 'GET',
      url: '/api/console/exports/cases?format=pdf',
      headers: as(a, false),
    });
    expect(bad.statusCode).toBe(400);

    const dash = await t.app.inject({
      method: 'GET',
      url: '/api/console/dashboard?days=7',
      headers: as(a, false),
    });
    expect(dash.statusCode).toBe(200);
    const d = dash.json() as {
      open: { total: number };
      kevOpen: number;
      newPerDay: { count: number }[];
      aiCallsThisMonth: number;
    };
    expect(d.open.total).toBe(2);
    expect(d.newPerDay).toHaveLength(7);
    expect(d.newPerDay.at(-1)!.count).toBe(3);
    expect(d.aiCallsThisMonth).toBe(0);
    const tooMany = await t.app.inject({
      method: 'GET',
      url: '/api/console/dashboard?days=1000',
      headers: as(a, false),
    });
    expect(tooMany.statusCode).toBe(400);
  });
});

describe('console triage routes', () => {
  it('previews a triage: cases selected, AI calls used and what the month has left', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/console/cases/triage/preview',
      headers: as(a),
      payload: { filters: { severity: 'CRITICAL,HIGH' } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const p = res.json() as {
      cases: number;
      aiCalls: number;
      skippedForQuota: number;
      month: { remaining: number; limit: number };
    };
    expect(p).toMatchObject({ cases: 2, aiCalls: 2, skippedForQuota: 0 });
    expect(p.month.remaining).toBe(p.month.limit);
    const other = await t.app.inject({
      method: 'POST',
      url: '/api/console/cases/triage/preview',
      headers: as(b),
      payload: { caseIds },
    });
    expect(other.json()).toMatchObject({ cases: 0, aiCalls: 0 });
  });

  it('refuses a triage billed to no key, another workspace key, or a key without triage:write', async () => {
    const url = '/api/console/cases/triage';
    const noKey = await t.app.inject({ method: 'POST', url, headers: as(a), payload: { caseIds } });
    expect(noKey.statusCode).toBe(400);
    const foreign = await t.app.inject({
      method: 'POST',
      url,
      headers: as(a),
      payload: { key: b.keyId, caseIds },
    });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json()).toMatchObject({
      code: 'invalid_request',
      errors: [{ path: '/key', message: 'must be an active key of this workspace' }],
    });
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/console/keys',
      headers: as(a),
      payload: { label: 'read only', scopes: ['scans:read'] },
    });
    const weak = (created.json() as { id: string }).id;
    const weakRes = await t.app.inject({
      method: 'POST',
      url,
      headers: as(a),
      payload: { key: weak, caseIds },
    });
    expect(weakRes.json()).toMatchObject({
      errors: [{ path: '/key', message: 'must be a key with the cases:write and triage:write scope' }],
    });
    const one = await t.app.inject({
      method: 'POST',
      url: `/api/console/cases/${caseIds[0]}/triage`,
      headers: as(b),
      payload: { key: b.keyId },
    });
    expect(one.statusCode).toBe(404);
    const noCsrf = await t.app.inject({
      method: 'POST',
      url,
      headers: as(a, false),
      payload: { key: a.keyId, caseIds },
    });
    expect(noCsrf.statusCode).toBe(403);

    const upload = await t.app.inject({
      method: 'POST',
      url: '/api/console/scans?triage=new',
      headers: { ...as(a), 'content-type': multipart(FIXTURE).type },
      payload: multipart(FIXTURE).body,
    });
    expect(upload.statusCode).toBe(400);
    expect(upload.json()).toMatchObject({ errors: [{ path: '/querystring/key' }] });
  });

  it('accepts a triage of the selection billed to a key of the workspace', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/console/cases/triage',
      headers: as(a),
      payload: { key: a.keyId, caseIds: [caseIds[0]] },
    });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({
      requested: 1,
      total: 1,
      skippedForQuota: 0,
      batchId: expect.any(String),
    });
  });
});

describe('console workflow routes', () => {
  it('previews a mapping for a sample case of the workspace, and refuses unknown placeholders', async () => {
    const url = '/api/console/workflows/preview';
    const res = await t.app.inject({
      method: 'POST',
      url,
      headers: as(a),
      payload: {
        kind: 'github',
        fields: { summary: '{{case.severity}}: {{case.title}}', labels: ['sev-{{case.severity}}'] },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const p = res.json() as { case: { id: string }; summary: string; labels: string[] };
    expect(caseIds).toContain(p.case.id);
    expect(p.summary).toMatch(/^(CRITICAL|HIGH|LOW): /);
    expect(p.labels[0]).toMatch(/^sev-/);

    const bad = await t.app.inject({
      method: 'POST',
      url,
      headers: as(a),
      payload: { fields: { summary: '{{case.secret}}' } },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'invalid_request', errors: [{ path: '/fields/summary' }] });
    const foreign = await t.app.inject({
      method: 'POST',
      url,
      headers: as(b),
      payload: { caseId: caseIds[0] },
    });
    expect(foreign.statusCode).toBe(404);
    const none = await t.app.inject({ method: 'POST', url, headers: as(b), payload: {} });
    expect(none.statusCode).toBe(404);
    const noCsrf = await t.app.inject({ method: 'POST', url, headers: as(a, false), payload: {} });
    expect(noCsrf.statusCode).toBe(403);
  });

  it("answers 404 for another workspace's or an unknown workflow, and 400 for a malformed one", async () => {
    for (const [method, url] of [
      ['GET', `/api/console/workflows/${ID}`],
      ['POST', `/api/console/workflows/${ID}/test`],
      ['GET', `/api/console/workflows/${ID}/deliveries`],
      ['DELETE', `/api/console/workflows/${ID}`],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: as(a) });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/console/workflows',
      headers: as(a),
      payload: { name: '', target: { kind: 'ftp' } },
    });
    expect(bad.statusCode).toBe(400);
    const list = await t.app.inject({ method: 'GET', url: '/api/console/workflows', headers: as(a, false) });
    expect(list.json()).toEqual({ object: 'list', data: [], nextCursor: null });
  });
});
