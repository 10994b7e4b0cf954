import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';

/**
 * docs/cases.md#one-vulnerability-one-case: a case is paired through its one shared key among
 * many of its own, with a case of an earlier scan or of the same scan, and a key only one case has
 * marks nothing (the invariant a marking that skips unshared keys would rely on).
 */
let t: ScanTestApp;
let key: string;

interface CaseView {
  id: string;
  title: string;
  duplicateOf: string | null;
}

async function upload(tool: string, findings: Record<string, unknown>[]): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/pipeline/scan?format=cli',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify({ tool: { name: tool, version: '1' }, findings }),
  });
  expect(res.statusCode, res.body).toBe(202);
  const scanId = (res.json() as { scanId: string }).scanId;
  expect((await waitForScan(t.app, key, scanId)).status).toBe('completed');
}

async function duplicateOf(): Promise<Record<string, string | null>> {
  const res = await t.app.inject({
    method: 'GET',
    url: '/api/v1/cases?limit=200&duplicates=include',
    headers: { 'x-api-key': key },
  });
  expect(res.statusCode, res.body).toBe(200);
  const cases = res.json().data as CaseView[];
  const title = new Map(cases.map((c) => [c.id, c.title]));
  return Object.fromEntries(cases.map((c) => [c.title, c.duplicateOf ? title.get(c.duplicateOf)! : null]));
}

const finding = (title: string, ruleId: string, asset: string, cveIds: string[]) => ({
  title,
  severity: 'high',
  ruleId,
  asset,
  cveIds,
});

beforeAll(async () => {
  t = await startScanApp();
  const session = await signUp(t.app);
  key = (await createKey(t.app, session, ['scans:read', 'scans:write', 'cases:write'])).key;
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('keys shared by two cases or more', () => {
  it('pair cases through their one shared key, and keys of one case pair nothing', async () => {
    await upload('alpha', [
      finding('A', 'A-1', 'web-02.acme.test', ['CVE-2099-60001', 'CVE-2099-60002', 'CVE-2099-60003']),
      finding('U', 'A-2', 'web-02.acme.test', ['CVE-2099-60009']),
    ]);
    await upload('beta', [
      finding('B', 'B-1', 'web-02.acme.test', ['CVE-2099-60004', 'CVE-2099-60005', 'CVE-2099-60003']),
      finding('V', 'B-1', 'db-02.acme.test', ['CVE-2099-60001']),
      finding('W', 'B-2', 'web-03.acme.test', ['CVE-2099-60006', 'CVE-2099-60007']),
      finding('X', 'B-3', 'web-03.acme.test', ['CVE-2099-60008', 'CVE-2099-60006']),
    ]);
    expect(await duplicateOf()).toEqual({ A: null, U: null, B: 'A', V: null, W: null, X: 'W' });
  });
});
