import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';

/**
 * docs/cases.md#one-vulnerability-one-case: two cases on one asset that share a CVE or an alias are
 * one vulnerability; the later is a duplicate of the earliest open one, hidden unless asked for,
 * following its original's status, and can be un-marked.
 */
const FIXTURES = path.resolve('test/fixtures/scans');
const qualys = readFileSync(path.join(FIXTURES, 'qualys/Qualys_Sample_Report.xml'));
const nessus = readFileSync(path.join(FIXTURES, 'derived/qualys-sample-hosts.nessus'));
const snykBom = readFileSync(path.join(FIXTURES, 'cyclonedx/valid-vulnerability-1.4.json'));
const grypeBom = JSON.parse(
  readFileSync(path.join(FIXTURES, 'cyclonedx/nested-component-log4j.json'), 'utf8'),
) as {
  metadata: Record<string, unknown>;
  vulnerabilities: { id: string; references?: unknown[] }[];
};

/**
 * The real Grype BOM with its GHSA advisory for Log4Shell naming the CVE in `references`, as
 * producers that relate advisories write it (the file itself lists the two unrelated).
 */
function grypeWithReference(keep: (id: string) => boolean, tool = 'grype'): Buffer {
  const vulnerabilities = grypeBom.vulnerabilities
    .filter((v) => keep(v.id))
    .map((v) =>
      v.id === 'GHSA-jfh8-c2jp-5v3q'
        ? { ...v, references: [{ id: 'CVE-2021-44228', source: { name: 'NVD' } }] }
        : v,
    );
  const metadata = { ...grypeBom.metadata, tools: [{ name: tool }] };
  return Buffer.from(JSON.stringify({ ...grypeBom, metadata, vulnerabilities }));
}

interface CaseView {
  id: string;
  title: string;
  status: string;
  scanner: string;
  ruleId: string | null;
  cveIds: string[];
  aliases: string[];
  duplicateOf: string | null;
  asset: { ip: string | null; fqdn: string | null; host: string | null };
}

let t: ScanTestApp;
let session: Awaited<ReturnType<typeof signUp>>;
let key: string;
let other: Awaited<ReturnType<typeof signUp>>;
let otherKey: string;

async function upload(body: Buffer, k = key, query = ''): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/pipeline/scan${query}`,
    headers: { 'x-api-key': k, 'content-type': 'application/octet-stream' },
    payload: body,
  });
  expect(res.statusCode).toBe(202);
  const scanId = (res.json() as { scanId: string }).scanId;
  expect((await waitForScan(t.app, k, scanId)).status).toBe('completed');
  return scanId;
}

async function get<T>(url: string, k = key): Promise<T> {
  const res = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': k } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as T;
}

async function cases(query: string, k = key): Promise<CaseView[]> {
  const out: CaseView[] = [];
  let cursor: string | null = null;
  do {
    const page: { data: CaseView[]; nextCursor: string | null } = await get(
      `/api/v1/cases?limit=200&${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      k,
    );
    out.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

function patch(id: string, body: unknown, k = key) {
  return t.app.inject({
    method: 'PATCH',
    url: `/api/v1/cases/${id}`,
    headers: { 'x-api-key': k, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
}

beforeAll(async () => {
  t = await startScanApp();
  session = await signUp(t.app);
  key = (await createKey(t.app, session, ['scans:read', 'scans:write', 'cases:write'])).key;
  other = await signUp(t.app);
  otherKey = (await createKey(t.app, other, ['scans:read', 'scans:write', 'cases:write'])).key;
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe('Nessus and Qualys on one host and CVE', () => {
  let original: CaseView;
  let duplicate: CaseView;
  let elsewhere: CaseView;

  it('the later scanner’s case is a duplicate of the earlier one; another host stays its own case', async () => {
    await upload(qualys);
    const before = await cases('cve=CVE-1999-0524');
    expect(new Set(before.map((c) => c.scanner))).toEqual(new Set(['Qualys']));
    original = before.find((c) => c.asset.ip === '64.41.200.243')!;
    expect(original.asset.fqdn).toBe('demo13.s02.sjc01.qualys.com');

    await upload(nessus);
    const all = await cases('cve=CVE-1999-0524&duplicates=include');
    expect(all).toHaveLength(before.length + 2);
    // Named by FQDN only, upper-cased with a trailing dot: the same host as Qualys's.
    duplicate = all.find((c) => c.scanner === 'Nessus' && c.asset.ip === null)!;
    elsewhere = all.find((c) => c.scanner === 'Nessus' && c.asset.ip === '64.41.200.251')!;
    expect(duplicate.asset.fqdn).toBe('DEMO13.S02.SJC01.QUALYS.COM.');
    expect(duplicate.duplicateOf).toBe(original.id);
    expect(elsewhere.duplicateOf).toBeNull();
    expect(all.filter((c) => c.duplicateOf !== null).map((c) => c.id)).toEqual([duplicate.id]);

    // Hidden by default from the list.
    const visible = await cases('cve=CVE-1999-0524');
    expect(visible.map((c) => c.id).sort()).toEqual(
      all
        .filter((c) => c.id !== duplicate.id)
        .map((c) => c.id)
        .sort(),
    );
    expect(await cases('duplicates=exclude&cve=CVE-1999-0524')).toEqual(visible);
    // The case itself is still there by id, with its own sightings.
    const one = await get<CaseView & { evidence: { scanId: string }[] }>(`/api/v1/cases/${duplicate.id}`);
    expect(one.duplicateOf).toBe(original.id);
    expect(one.evidence).toHaveLength(1);
  });

  it('counts, the dashboard and exports leave the duplicate out unless duplicates=include', async () => {
    const headers = { cookie: session.cookie };
    const counts = async (q: string) =>
      (
        (await t.app.inject({ method: 'GET', url: `/api/console/cases/counts?${q}`, headers })).json() as {
          total: number;
        }
      ).total;
    const visible = (await cases('cve=CVE-1999-0524')).length;
    expect(await counts('cve=CVE-1999-0524')).toBe(visible);
    expect(await counts('cve=CVE-1999-0524&duplicates=include')).toBe(visible + 1);

    const dash = (await t.app.inject({ method: 'GET', url: '/api/console/dashboard', headers })).json() as {
      open: { total: number };
    };
    const openVisible = (await cases('status=open,in_progress')).length;
    expect(dash.open.total).toBe(openVisible);
    const withDuplicates = await cases('status=open,in_progress&duplicates=include');
    expect(withDuplicates.length).toBe(openVisible + withDuplicates.filter((c) => c.duplicateOf).length);

    const exported = async (q: string) => {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/v1/exports/cases?format=jsonl&cve=CVE-1999-0524${q}`,
        headers: { 'x-api-key': key },
      });
      expect(res.statusCode).toBe(200);
      return res.body
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id);
    };
    const lines = await exported('');
    expect(lines).toHaveLength(visible);
    expect(lines).not.toContain(duplicate.id);
    expect(await exported('&duplicates=include')).toContain(duplicate.id);
  });

  it('follows its original’s status changes, with its own history entry', async () => {
    const res = await patch(original.id, { status: 'in_progress', note: 'patching' });
    expect(res.statusCode).toBe(200);
    const dup = await get<
      CaseView & { history: { from: string; to: string; actor: string; note: string }[] }
    >(`/api/v1/cases/${duplicate.id}`);
    expect(dup.status).toBe('in_progress');
    expect(dup.history.at(-1)).toMatchObject({
      from: 'open',
      to: 'in_progress',
      note: `Follows its original case ${original.id}.`,
    });
    expect(dup.history.at(-1)!.actor).toMatch(/^key:/);
    // The other host's case is its own.
    expect((await get<CaseView>(`/api/v1/cases/${elsewhere.id}`)).status).toBe('open');
  });

  it('another workspace cannot see or un-mark it: 404', async () => {
    const res = await patch(duplicate.id, { duplicateOf: null }, otherKey);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ status: 404 });
    expect((await get<CaseView>(`/api/v1/cases/${duplicate.id}`)).duplicateOf).toBe(original.id);
    // Its own upload of the same files makes its own cases, never duplicates of ours.
    await upload(qualys, otherKey);
    await upload(nessus, otherKey);
    const theirs = await cases('cve=CVE-1999-0524&duplicates=include', otherKey);
    const ids = new Set([original.id, duplicate.id, elsewhere.id]);
    expect(theirs.filter((c) => ids.has(c.id) || (c.duplicateOf && ids.has(c.duplicateOf)))).toEqual([]);
  });

  it('un-marking shows it again, keeps its own status from then on, and a rescan does not mark it again', async () => {
    const res = await patch(duplicate.id, { duplicateOf: null });
    expect(res.statusCode).toBe(200);
    const body = res.json() as CaseView & { history: { note: string }[] };
    expect(body.duplicateOf).toBeNull();
    expect(body.history.at(-1)!.note).toBe(`No longer a duplicate of case ${original.id}.`);
    expect((await cases('cve=CVE-1999-0524')).map((c) => c.id)).toContain(duplicate.id);

    expect((await patch(original.id, { status: 'resolved' })).statusCode).toBe(200);
    expect((await get<CaseView>(`/api/v1/cases/${duplicate.id}`)).status).toBe('in_progress');
    expect((await patch(original.id, { status: 'open' })).statusCode).toBe(200);
    await upload(nessus);
    expect((await get<CaseView>(`/api/v1/cases/${duplicate.id}`)).duplicateOf).toBeNull();
  });

  it('refuses a malformed PATCH: duplicateOf only null, not empty, no unknown fields', async () => {
    for (const body of [{ duplicateOf: original.id }, {}, { note: 'x' }, { duplicateOf: null, extra: 1 }]) {
      const res = await patch(duplicate.id, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
    expect((await patch('not-a-uuid', { duplicateOf: null })).statusCode).toBe(404);
    expect((await patch(duplicate.id, { duplicateOf: null, note: 'x'.repeat(3000) })).statusCode).toBe(400);
    const huge = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/cases/${duplicate.id}`,
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload: JSON.stringify({ duplicateOf: null, note: 'x'.repeat(20_000) }),
    });
    expect(huge.statusCode).toBe(413);
    const hostile = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/cases/${duplicate.id}`,
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload: '{"duplicateOf": null, "__proto__": {"status": "resolved"}}',
    });
    expect(hostile.statusCode).toBe(400);
    const q = await t.app.inject({
      method: 'GET',
      url: '/api/v1/cases?duplicates=only',
      headers: { 'x-api-key': key },
    });
    expect(q.statusCode).toBe(400);
  });
});

describe('aliases from CycloneDX', () => {
  it('keeps a vendor id and its CVE reference from a real BOM', async () => {
    await upload(snykBom);
    const [c] = await cases('cve=CVE-2018-7489');
    expect(c!.aliases).toEqual(['SNYK-JAVA-COMFASTERXMLJACKSONCORE-32111']);
  });

  it('GHSA-jfh8-c2jp-5v3q naming CVE-2021-44228 is one case with it on log4j-core 2.13.2', async () => {
    const isLog4Shell = (id: string) => id === 'CVE-2021-44228' || id === 'GHSA-jfh8-c2jp-5v3q';
    await upload(
      grypeWithReference((id) => id === 'CVE-2021-44228'),
      key,
      '?asset=billing',
    );
    // A second tool on the same application (a rescan by the first would resolve what it no longer lists).
    await upload(
      grypeWithReference((id) => !isLog4Shell(id) || id === 'GHSA-jfh8-c2jp-5v3q', 'trivy'),
      key,
      '?asset=billing',
    );
    const both = await cases('cve=CVE-2021-44228&duplicates=include&asset=billing');
    expect(both.map((c) => c.ruleId).sort()).toEqual(['CVE-2021-44228', 'GHSA-jfh8-c2jp-5v3q']);
    const cve = both.find((c) => c.ruleId === 'CVE-2021-44228')!;
    const ghsa = both.find((c) => c.ruleId === 'GHSA-jfh8-c2jp-5v3q')!;
    expect(ghsa.aliases).toEqual(['GHSA-jfh8-c2jp-5v3q']);
    expect(ghsa.duplicateOf).toBe(cve.id);
    expect(cve.duplicateOf).toBeNull();
    expect((await cases('cve=CVE-2021-44228&asset=billing')).map((c) => c.id)).toEqual([cve.id]);
    // Other GHSA advisories of the same package name no CVE: their own cases.
    const others = (await cases('asset=billing')).filter((c) => c.ruleId?.startsWith('GHSA-'));
    expect(others.length).toBeGreaterThan(0);
    expect(others.every((c) => c.duplicateOf === null)).toBe(true);
  });

  it('the same package of another application is another asset: not a duplicate', async () => {
    await upload(
      grypeWithReference((id) => id === 'GHSA-jfh8-c2jp-5v3q'),
      key,
      '?asset=payments',
    );
    const [c] = await cases('cve=CVE-2021-44228&asset=payments&duplicates=include');
    expect(c!.duplicateOf).toBeNull();
  });

  it('two advisories of one vulnerability in one file: one case shows', async () => {
    await upload(grypeWithReference(isLog4ShellOnly), key, '?asset=search');
    const both = await cases('cve=CVE-2021-44228&asset=search&duplicates=include');
    expect(both).toHaveLength(2);
    expect(both.filter((c) => c.duplicateOf !== null)).toHaveLength(1);
    expect(await cases('cve=CVE-2021-44228&asset=search')).toHaveLength(1);
  });
});

function isLog4ShellOnly(id: string): boolean {
  return id === 'CVE-2021-44228' || id === 'GHSA-jfh8-c2jp-5v3q';
}
