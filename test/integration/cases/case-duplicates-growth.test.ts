import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';

/**
 * docs/cases.md#one-vulnerability-one-case: a case seen again whose keys grew (its scanner now
 * names the CVE) is marked a duplicate of an earlier open original, in the completion of the scan
 * that saw it; a case that is itself an original of duplicates, or the earlier of the two, is not.
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

async function byTitle(): Promise<Map<string, CaseView>> {
  const res = await t.app.inject({
    method: 'GET',
    url: '/api/v1/cases?limit=200&duplicates=include',
    headers: { 'x-api-key': key },
  });
  expect(res.statusCode, res.body).toBe(200);
  return new Map((res.json().data as CaseView[]).map((c) => [c.title, c]));
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

describe('a case whose keys grow', () => {
  it('is marked a duplicate of the earlier open case when a later scan names the shared CVE', async () => {
    await upload('alpha', [finding('alpha on web', 'A-1', 'web-01.acme.test', ['CVE-2099-50001'])]);
    // Another scanner reports it without naming the CVE: no key, its own case.
    await upload('beta', [finding('beta on web', 'B-7', 'web-01.acme.test', [])]);
    let cases = await byTitle();
    expect(cases.get('beta on web')!.duplicateOf).toBeNull();

    // Its next scan names the CVE: the same case (same rule and asset), now with a key.
    await upload('beta', [finding('beta on web', 'B-7', 'web-01.acme.test', ['CVE-2099-50001'])]);
    cases = await byTitle();
    expect(cases.get('beta on web')!.duplicateOf).toBe(cases.get('alpha on web')!.id);
    expect(cases.get('alpha on web')!.duplicateOf).toBeNull();
  });

  it('an earlier case seen again is not marked a duplicate of a later one', async () => {
    await upload('gamma', [finding('gamma on db', 'G-1', 'db-01.acme.test', [])]);
    await upload('delta', [finding('delta on db', 'D-1', 'db-01.acme.test', ['CVE-2099-50002'])]);
    await upload('gamma', [finding('gamma on db', 'G-1', 'db-01.acme.test', ['CVE-2099-50002'])]);
    const cases = await byTitle();
    expect(cases.get('gamma on db')!.duplicateOf).toBeNull();
    expect(cases.get('delta on db')!.duplicateOf).toBeNull();
  });

  it('an original of duplicates seen again stays an original', async () => {
    await upload('zeta', [finding('zeta on app', 'Z-1', 'app-01.acme.test', ['CVE-2099-50004'])]);
    await upload('eps', [finding('eps on app', 'E-1', 'app-01.acme.test', ['CVE-2099-50003'])]);
    await upload('eta', [finding('eta on app', 'H-1', 'app-01.acme.test', ['CVE-2099-50003'])]);
    let cases = await byTitle();
    expect(cases.get('eta on app')!.duplicateOf).toBe(cases.get('eps on app')!.id);
    // eps now also names zeta's CVE; zeta is earlier, but eps has a duplicate: left as it is.
    await upload('eps', [
      finding('eps on app', 'E-1', 'app-01.acme.test', ['CVE-2099-50003', 'CVE-2099-50004']),
    ]);
    cases = await byTitle();
    expect(cases.get('eps on app')!.duplicateOf).toBeNull();
    expect(cases.get('eta on app')!.duplicateOf).toBe(cases.get('eps on app')!.id);
  });
});
