import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';

const FIXTURES = path.resolve('test/fixtures/scans');
const openvas = readFileSync(path.join(FIXTURES, 'openvas/many_vuln.xml'));

let t: ScanTestApp;
let owner: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;
let scanId: string;
let caseId: string;
let findingId: string;

beforeAll(async () => {
  t = await startScanApp();
  owner = await signUp(t.app);
  other = await signUp(t.app);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/pipeline/scan',
    headers: { 'x-api-key': owner.key, 'content-type': 'application/xml' },
    payload: openvas,
  });
  scanId = res.json().scanId;
  await waitForScan(t.app, owner.key, scanId);
  const findings = await t.app.inject({
    method: 'GET',
    url: '/api/v1/findings?limit=1',
    headers: { 'x-api-key': owner.key },
  });
  findingId = findings.json().data[0].id;
  caseId = findings.json().data[0].caseId;
});
afterAll(async () => {
  await t?.close();
});

const notFound = (detail: string) => ({
  type: 'https://docs.vulntriage.dev/errors/not_found',
  title: 'Not found',
  status: 404,
  code: 'not_found',
  detail,
  requestId: expect.any(String),
});

describe('workspace isolation', () => {
  it.each([
    ['GET', () => `/api/pipeline/scan/${scanId}`, 'No such scan.'],
    ['GET', () => `/api/v1/scans/${scanId}`, 'No such scan.'],
    ['GET', () => `/api/v1/cases/${caseId}`, 'No such case.'],
    ['GET', () => `/api/v1/findings/${findingId}`, 'No such finding.'],
  ])('%s %s of another workspace is 404, like an unknown id', async (method, url, detail) => {
    const res = await t.app.inject({
      method: method as 'GET',
      url: url(),
      headers: { 'x-api-key': other.key },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(notFound(detail));
    const mine = await t.app.inject({
      method: method as 'GET',
      url: url(),
      headers: { 'x-api-key': owner.key },
    });
    expect(mine.statusCode).toBe(200);
  });

  it('PATCH of another workspace case is 404 and changes nothing', async () => {
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/cases/${caseId}`,
      headers: { 'x-api-key': other.key },
      payload: { status: 'resolved' },
    });
    expect(res.json()).toEqual(notFound('No such case.'));
    const row = await t.infra.pool.query(`SELECT status FROM cases WHERE id = $1`, [caseId]);
    expect(row.rows[0].status).toBe('open');
    const history = await t.infra.pool.query(
      `SELECT count(*)::int AS n FROM case_status_history WHERE case_id = $1`,
      [caseId],
    );
    expect(history.rows[0].n).toBe(0);
  });

  it('lists of another workspace are empty, even when filtered by this scan id', async () => {
    for (const url of [
      '/api/v1/scans',
      '/api/v1/cases',
      `/api/v1/cases?scan=${scanId}`,
      '/api/v1/findings',
      `/api/v1/findings?scan=${scanId}`,
    ]) {
      const res = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': other.key } });
      expect(res.json(), url).toEqual({ object: 'list', data: [], nextCursor: null });
    }
  });

  it.each(['not-a-uuid', '00000000-0000-0000-0000-000000000000', "1' OR '1'='1"])(
    'malformed or unknown id %s is 404',
    async (id) => {
      for (const url of [
        `/api/pipeline/scan/${encodeURIComponent(id)}`,
        `/api/v1/cases/${encodeURIComponent(id)}`,
        `/api/v1/findings/${encodeURIComponent(id)}`,
      ]) {
        const res = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': owner.key } });
        expect(res.statusCode, url).toBe(404);
      }
    },
  );

  it('a tampered cursor is 400, not a server error', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/cases?cursor=bm90LWpzb24',
      headers: { 'x-api-key': owner.key },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      code: 'invalid_request',
      errors: [{ path: '/querystring/cursor', message: 'is not a valid cursor' }],
    });
  });
});

describe('authentication and scopes', () => {
  it('no key is 401 missing_api_key, before the body is read', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/pipeline/scan',
      headers: { 'content-type': 'application/xml' },
      payload: openvas,
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('missing_api_key');
  });

  it('an invalid key is 401 invalid_api_key', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/pipeline/scan/${scanId}`,
      headers: { 'x-api-key': 'svc_notarealkey' },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('invalid_api_key');
  });

  it('uploading needs scans:write; reading needs scans:read', async () => {
    const readOnly = await createKey(t.app, owner, ['scans:read']);
    const up = await t.app.inject({
      method: 'POST',
      url: '/api/pipeline/scan',
      headers: { 'x-api-key': readOnly.key, 'content-type': 'application/xml' },
      payload: openvas,
    });
    expect(up.statusCode).toBe(403);
    expect(up.json()).toMatchObject({
      code: 'insufficient_scope',
      detail: 'This route needs a key with the scans:write scope.',
    });
    const patch = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/cases/${caseId}`,
      headers: { 'x-api-key': readOnly.key },
      payload: { status: 'resolved' },
    });
    expect(patch.statusCode).toBe(403);
    const read = await t.app.inject({
      method: 'GET',
      url: `/api/pipeline/scan/${scanId}`,
      headers: { 'x-api-key': readOnly.key },
    });
    expect(read.statusCode).toBe(200);

    const writeOnly = await createKey(t.app, owner, ['scans:write']);
    const list = await t.app.inject({
      method: 'GET',
      url: '/api/v1/cases',
      headers: { 'x-api-key': writeOnly.key },
    });
    expect(list.statusCode).toBe(403);
    expect(list.json().detail).toBe('This route needs a key with the scans:read scope.');
  });
});

describe('case lifecycle', () => {
  it('a resolved case seen again by a later scan is reopened, with the change in its history', async () => {
    await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/cases/${caseId}`,
      headers: { 'x-api-key': owner.key },
      payload: { status: 'resolved', note: 'patched' },
    });
    const again = await t.app.inject({
      method: 'POST',
      url: '/api/pipeline/scan',
      headers: { 'x-api-key': owner.key, 'content-type': 'application/xml' },
      payload: openvas,
    });
    const done = await waitForScan(t.app, owner.key, again.json().scanId);
    expect(done.counts).toMatchObject({ new: 0 });
    const c = await t.app.inject({
      method: 'GET',
      url: `/api/v1/cases/${caseId}`,
      headers: { 'x-api-key': owner.key },
    });
    expect(c.json()).toMatchObject({
      status: 'open',
      sightings: 2,
      history: [
        { from: 'open', to: 'resolved', actor: expect.stringMatching(/^key:/), note: 'patched' },
        { from: 'resolved', to: 'open', actor: `scan:${again.json().scanId}`, note: 'Seen again by a scan.' },
      ],
    });
    expect((c.json().evidence as unknown[]).length).toBe(2);
  });
});
