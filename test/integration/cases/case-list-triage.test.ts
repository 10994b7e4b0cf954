/* eslint-disable @typescript-eslint/no-explicit-any -- assertions walk parsed JSON documents */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { cycloneDx16Validator, sarifValidator } from '../../helpers/export-schemas.js';
import { problemDocument } from '../../helpers/problem.js';
import { importEpss, importKev } from '../../../src/domain/enrichment/index.js';
import { recordCaseTriages, type CaseTriageAnswer } from '../../../src/domain/cases/case-triage-store.js';
import { GRANT_CASES_WRITE } from '../../../src/db/migrations/m012-cases-write-scope.js';

/**
 * Cases carry their triage (docs/cases.md#triage-on-a-case): triage and triageStale in lists, detail, triage history
 * and exports; the priority/action/triaged/stale filters; sorts with cursors that stay correct
 * under ties; cases:write on PATCH.
 */
const N = 24;
const CVE = (i: number) => `CVE-2099-2000${i % 4}`;
const PRIORITY = ['CRITICAL', 'HIGH', 'MEDIUM'] as const;
const ACTION = { CRITICAL: 'PATCH_IMMEDIATELY', HIGH: 'MITIGATE', MEDIUM: 'MONITOR' } as const;
const TRIAGED = 16; // F0…F15 are triaged
const SCAN = {
  tool: { name: 'list-test', version: '1' },
  findings: [
    ...Array.from({ length: N }, (_, i) => ({
      title: `F${i}`,
      severity: ['critical', 'high', 'medium', 'low'][i % 4],
      cveIds: [CVE(i)],
      asset: `host-${i}`,
      ruleId: 'R1',
    })),
    { title: 'NOCVE-1', severity: 'low', cveIds: [], asset: 'host-x', ruleId: 'R2' },
    { title: 'NOCVE-2', severity: 'info', cveIds: [], asset: 'host-y', ruleId: 'R2' },
  ],
};
const TOTAL = N + 2;

interface CaseView {
  id: string;
  title: string;
  epss: number | null;
  lastSeen: string;
  firstSeen: string;
  triage: null | { priority: string; recommendedAction: string; reasoning: string };
  triageStale: boolean;
}

let t: ScanTestApp;
let owner: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;
let dir: string;
const byTitle = new Map<string, CaseView>();
const validateSarif = sarifValidator();
const validateVex = cycloneDx16Validator();

const get = (url: string, key = owner.key) =>
  t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });

async function upload(key: string, body: unknown): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/pipeline/scan?format=cli',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  expect(res.statusCode, res.body).toBe(202);
  expect((await waitForScan(t.app, key, (res.json() as { scanId: string }).scanId)).status).toBe('completed');
}

/** Every case of a query, walking the cursor `limit` at a time. */
async function walk(query: string, limit = 3): Promise<CaseView[]> {
  const out: CaseView[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const res = await get(
      `/api/v1/cases?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as { data: CaseView[]; nextCursor: string | null };
    out.push(...page.data);
    if (!page.nextCursor) return out;
    cursor = page.nextCursor;
  }
  throw new Error('paging did not end');
}

const titles = (cs: { title: string }[]) => cs.map((c) => c.title).sort();
const expected = (pred: (i: number) => boolean) =>
  Array.from({ length: N }, (_, i) => i)
    .filter(pred)
    .map((i) => `F${i}`)
    .sort();

beforeAll(async () => {
  t = await startScanApp();
  dir = await mkdtemp(path.join(tmpdir(), 'case-list-'));
  owner = await signUp(t.app);
  other = await signUp(t.app);
  // EPSS before the triage, so the triage's snapshot holds it: ties at 0.5, one low, one none.
  const epss = path.join(dir, 'epss.csv');
  await writeFile(
    epss,
    '#model_version:v1,score_date:2099-01-01T00:00:00Z\ncve,epss,percentile\n' +
      'CVE-2099-20000,0.5,0.9\nCVE-2099-20001,0.5,0.9\nCVE-2099-20002,0.02,0.1\n',
  );
  await importEpss(t.infra.pool, { file: epss });
  await upload(owner.key, SCAN);
  // A second scan sights F0…F4 again: their lastSeen moves, the rest tie.
  await upload(owner.key, { ...SCAN, findings: SCAN.findings.slice(0, 5) });
  await upload(other.key, SCAN);
  for (const c of await walk('', 200)) byTitle.set(c.title, c);
  expect(byTitle.size).toBe(TOTAL);
  const answer = (i: number): CaseTriageAnswer => {
    const priority = PRIORITY[i % 3]!;
    return {
      priority,
      recommendedAction: ACTION[priority],
      reasoning: `Reasoning for F${i}.`,
      confidenceScore: 0.8,
      severityOverride: null,
      model: 'local:ssvc-2.0.3',
      triagedAt: new Date(Date.UTC(2026, 10, 24, 8, 0, i)).toISOString(),
      policyVersion: '2026-11-24.1',
    };
  };
  await recordCaseTriages(
    t.infra.pool,
    Array.from({ length: TRIAGED }, (_, i) => ({
      workspaceId: owner.workspaceId,
      caseId: byTitle.get(`F${i}`)!.id,
      answer: answer(i),
      keyId: owner.keyId,
    })),
  );
  // F0 triaged twice: its history has two entries.
  await recordCaseTriages(t.infra.pool, [
    {
      workspaceId: owner.workspaceId,
      caseId: byTitle.get('F0')!.id,
      answer: { ...answer(0), reasoning: 'Second look.', triagedAt: '2026-11-24T09:00:00.000Z' },
      keyId: owner.keyId,
    },
  ]);
  // KEV now lists CVE-2099-20003: the triaged cases carrying it (F3, F7, F11, F15) go stale.
  const kev = path.join(dir, 'kev.json');
  await writeFile(
    kev,
    JSON.stringify({
      catalogVersion: '2099.01.01',
      count: 1,
      vulnerabilities: [{ cveID: 'CVE-2099-20003', dateAdded: '2099-01-01', dueDate: '2099-01-21' }],
    }),
  );
  await importKev(t.infra.pool, { file: kev });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('GET /api/v1/cases with triage', () => {
  it('shows each case its current triage (or null) and triageStale', async () => {
    const all = await walk('', 200);
    const f1 = all.find((c) => c.title === 'F1')!;
    expect(f1).toMatchObject({
      epss: 0.5,
      triage: {
        priority: 'HIGH',
        recommendedAction: 'MITIGATE',
        reasoning: 'Reasoning for F1.',
        confidenceScore: 0.8,
        severityOverride: null,
        model: 'local:ssvc-2.0.3',
        triagedAt: '2026-11-24T08:00:01.000Z',
        policyVersion: '2026-11-24.1',
      },
      triageStale: false,
    });
    expect(all.find((c) => c.title === 'F0')!.triage).toMatchObject({ reasoning: 'Second look.' });
    expect(all.find((c) => c.title === 'F20')).toMatchObject({ triage: null, triageStale: false });
    expect(titles(all.filter((c) => c.triageStale))).toEqual(['F11', 'F15', 'F3', 'F7']);
  });

  it('filters on priority, action, triaged and stale, alone and with the other filters', async () => {
    expect(titles(await walk('&priority=CRITICAL,HIGH'))).toEqual(expected((i) => i < TRIAGED && i % 3 < 2));
    expect(titles(await walk('&action=MITIGATE'))).toEqual(expected((i) => i < TRIAGED && i % 3 === 1));
    expect(titles(await walk('&action=PATCH_IMMEDIATELY,MONITOR'))).toEqual(
      expected((i) => i < TRIAGED && i % 3 !== 1),
    );
    expect(titles(await walk('&triaged=true'))).toEqual(expected((i) => i < TRIAGED));
    expect(titles(await walk('&triaged=false'))).toEqual(
      [...expected((i) => i >= TRIAGED), 'NOCVE-1', 'NOCVE-2'].sort(),
    );
    expect(titles(await walk('&stale=true'))).toEqual(['F11', 'F15', 'F3', 'F7']);
    expect(await walk('&stale=false')).toHaveLength(TOTAL - 4);
    const urgent = await walk('&priority=CRITICAL,HIGH&kev=true&status=open&sort=priority');
    expect(urgent.map((c) => c.title)).toEqual(['F15', 'F3', 'F7']);
    expect(titles(await walk('&priority=INFO'))).toEqual([]);
  });

  it.each([
    ['priority', (c: CaseView) => PRIORITY.indexOf((c.triage?.priority ?? 'Z') as never) >>> 0, 'asc'],
    ['epss', (c: CaseView) => c.epss ?? -1, 'desc'],
    ['lastSeen', (c: CaseView) => Date.parse(c.lastSeen), 'desc'],
    ['firstSeen', (c: CaseView) => Date.parse(c.firstSeen), 'desc'],
  ] as const)(
    'pages through sort=%s with ties: every case exactly once, in order',
    async (sort, key, dir) => {
      for (const limit of [1, 3, 7]) {
        const seen = await walk(`&sort=${sort}`, limit);
        expect(seen.map((c) => c.id).sort()).toEqual([...byTitle.values()].map((c) => c.id).sort());
        const keys = seen.map(key);
        const sorted = [...keys].sort((a, b) => (dir === 'asc' ? a - b : b - a));
        expect(keys).toEqual(sorted);
      }
      // Filters and sorts together: the same set as the unsorted list.
      expect(titles(await walk(`&sort=${sort}&triaged=true`, 4))).toEqual(expected((i) => i < TRIAGED));
    },
  );

  it('orders priority most urgent first, untriaged last, and lastSeen with the re-sighted cases first', async () => {
    const byPriority = await walk('&sort=priority', 200);
    expect(byPriority.slice(0, 6).every((c) => c.triage?.priority === 'CRITICAL')).toBe(true);
    expect(byPriority.slice(TRIAGED).every((c) => c.triage === null)).toBe(true);
    const byLastSeen = await walk('&sort=lastSeen', 200);
    expect(titles(byLastSeen.slice(0, 5))).toEqual(['F0', 'F1', 'F2', 'F3', 'F4']);
  });
});

describe('cursors and bad values', () => {
  async function firstCursor(query: string): Promise<string> {
    const res = await get(`/api/v1/cases?limit=2${query}`);
    return (res.json() as { nextCursor: string }).nextCursor;
  }
  const wrongSort = problemDocument(
    400,
    'invalid_request',
    'Invalid request',
    'The cursor belongs to another sort order; pass back nextCursor with the same sort.',
  );

  it('refuses a cursor made under another sort (or none) with 400', async () => {
    const priority = await firstCursor('&sort=priority');
    const plain = await firstCursor('');
    for (const url of [
      `/api/v1/cases?sort=epss&cursor=${priority}`,
      `/api/v1/cases?sort=lastSeen&cursor=${plain}`,
    ]) {
      const res = await get(url);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        ...wrongSort,
        errors: [{ path: '/querystring/cursor', message: 'is not a cursor of this sort order' }],
      });
    }
    const res = await get(`/api/v1/cases?cursor=${priority}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_request', errors: [{ path: '/querystring/cursor' }] });
  });

  it('refuses a tampered sort cursor with 400, never a SQL error', async () => {
    const forge = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    for (const [sort, v] of [
      ['priority', 9],
      ['priority', '1; DROP TABLE cases'],
      ['lastSeen', 'yesterday'],
      ['epss', 2],
      ['epss', null],
    ] as const) {
      const res = await get(`/api/v1/cases?sort=${sort}&cursor=${forge({ s: '1', k: sort, v })}`);
      expect(res.statusCode, `${sort} ${String(v)}`).toBe(400);
      expect(res.json()).toMatchObject({
        code: 'invalid_request',
        errors: [{ path: '/querystring/cursor' }],
      });
    }
  });

  it.each([
    ['priority=URGENT', '/querystring/priority'],
    ['priority=', '/querystring/priority'],
    ['action=FIX_IT', '/querystring/action'],
    ['triaged=maybe', '/querystring/triaged'],
    ['stale=2', '/querystring/stale'],
    ['sort=severity', '/querystring/sort'],
    ['priority=HIGH,HIGH,… (10 KiB)', '/querystring/priority'],
  ])('answers %s with a 400 problem document naming the field', async (label, field) => {
    const query = label.includes('KiB') ? `priority=${'HIGH,'.repeat(2000)}HIGH` : label;
    const res = await get(`/api/v1/cases?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({
      ...problemDocument(
        400,
        'invalid_request',
        'Invalid request',
        'The request has invalid fields; see errors.',
      ),
      errors: [expect.objectContaining({ path: field })],
    });
  });

  it('lists the valid priorities when one is unknown', async () => {
    const res = await get('/api/v1/cases?priority=URGENT');
    expect(res.json().errors).toEqual([
      {
        path: '/querystring/priority',
        message: 'must be one or more of CRITICAL, HIGH, MEDIUM, LOW, INFO, separated by commas',
      },
    ]);
  });
});

describe('GET /api/v1/cases/:id and its triage history', () => {
  it('shows the current triage and the newest triage history entries', async () => {
    const res = await get(`/api/v1/cases/${byTitle.get('F0')!.id}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.triage).toMatchObject({ priority: 'CRITICAL', reasoning: 'Second look.' });
    expect(body.triageStale).toBe(false);
    expect(body.triageHistory.map((h: any) => h.reasoning)).toEqual(['Second look.', 'Reasoning for F0.']);
    expect(body.triageHistory[0]).toEqual({
      object: 'case_triage',
      id: expect.any(String),
      priority: 'CRITICAL',
      recommendedAction: 'PATCH_IMMEDIATELY',
      reasoning: 'Second look.',
      confidenceScore: 0.8,
      severityOverride: null,
      model: 'local:ssvc-2.0.3',
      triagedAt: '2026-11-24T09:00:00.000Z',
      policyVersion: '2026-11-24.1',
      actor: `key:${owner.keyId}`,
      enrichment: { kev: false, epss: 0.5, cvssScore: null },
    });
    expect(body.triageHistoryNextCursor).toBeNull();
    const untriaged = (await get(`/api/v1/cases/${byTitle.get('F20')!.id}`)).json();
    expect(untriaged).toMatchObject({ triage: null, triageStale: false, triageHistory: [] });
  });

  it('pages the triage history', async () => {
    const id = byTitle.get('F0')!.id;
    const first = (await get(`/api/v1/cases/${id}/triage-history?limit=1`)).json();
    expect(first).toMatchObject({ object: 'list', data: [{ reasoning: 'Second look.' }] });
    const rest = (await get(`/api/v1/cases/${id}/triage-history?limit=1&cursor=${first.nextCursor}`)).json();
    expect(rest).toMatchObject({ data: [{ reasoning: 'Reasoning for F0.' }], nextCursor: null });
    const bad = await get(`/api/v1/cases/${id}/triage-history?cursor=nope`);
    expect(bad.statusCode).toBe(400);
    expect((await get(`/api/v1/cases/${id}/triage-history?limit=0`)).statusCode).toBe(400);
    expect((await get(`/api/v1/cases/${id}/triage-history?sort=priority`)).statusCode).toBe(400);
  });

  it("answers another workspace's or an unknown case with 404", async () => {
    const id = byTitle.get('F0')!.id;
    const notFound = problemDocument(404, 'not_found', 'Not found', 'No case with this id.');
    for (const url of [`/api/v1/cases/${id}`, `/api/v1/cases/${id}/triage-history`]) {
      const res = await get(url, other.key);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'not_found', status: 404 });
    }
    for (const bad of ['00000000-0000-0000-0000-000000000000', 'not-a-uuid', "1'%20OR%20'1'='1"]) {
      const res = await get(`/api/v1/cases/${bad}/triage-history`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: notFound.code });
    }
    const res = await get(`/api/v1/cases/${id}/triage-history?limit=1`, other.key);
    expect(res.body).not.toContain('Second look');
  });

  it('filters findings on their case triage', async () => {
    const critical = new Set((await walk('&priority=CRITICAL', 200)).map((c) => c.id));
    const res = await get('/api/v1/findings?priority=CRITICAL&limit=200');
    expect(res.statusCode).toBe(200);
    const findings = res.json().data as { caseId: string; triage: unknown }[];
    expect(new Set(findings.map((f) => f.caseId))).toEqual(critical);
    expect(findings.length).toBe(critical.size + 2); // F0 and F3 were sighted twice
    expect(findings[0]).toMatchObject({ triage: { priority: 'CRITICAL' }, triageStale: expect.any(Boolean) });
    const untriaged = (await get('/api/v1/findings?triaged=false&limit=1')).json().data[0];
    expect(untriaged).toMatchObject({ triage: null, triageStale: false });
    const one = (await get(`/api/v1/findings/${(findings[0] as unknown as { id: string }).id}`)).json();
    expect(one.triage).toEqual(findings[0]!.triage);
    const stale = (await get('/api/v1/findings?stale=true&triaged=true&limit=200')).json().data as {
      caseId: string;
    }[];
    expect(new Set(stale.map((f) => f.caseId)).size).toBe(4);
  });
});

describe('PATCH /api/v1/cases/:id needs cases:write', () => {
  it('refuses an upload-only key with 403 insufficient_scope and changes nothing', async () => {
    const uploader = await createKey(t.app, owner, ['scans:write', 'scans:read'], 'ci');
    const id = byTitle.get('F5')!.id;
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/cases/${id}`,
      headers: { 'x-api-key': uploader.key },
      payload: { status: 'risk_accepted' },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(
      problemDocument(
        403,
        'insufficient_scope',
        'Insufficient scope',
        'This route needs a key with the cases:write scope.',
      ),
    );
    expect((await get(`/api/v1/cases/${id}`)).json().status).toBe('open');
  });

  it("lets a cases:write key change its workspace's case, and 404s another workspace's", async () => {
    const writer = await createKey(t.app, owner, ['cases:write'], 'triager');
    const id = byTitle.get('F6')!.id;
    const patch = (key: string) =>
      t.app.inject({
        method: 'PATCH',
        url: `/api/v1/cases/${id}`,
        headers: { 'x-api-key': key },
        payload: { status: 'in_progress' },
      });
    const res = await patch(writer.key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'in_progress', triage: { priority: 'CRITICAL' } });
    const foreign = await patch(other.key);
    expect(foreign.statusCode).toBe(404);
  });

  it('m012 gives cases:write to existing first keys only', async () => {
    const s = await signUp(t.app);
    const ci = await createKey(t.app, s, ['scans:write', 'triage:write', 'scans:read'], 'ci');
    await t.infra.pool.query(
      `UPDATE api_keys SET scopes = array_remove(scopes, 'cases:write') WHERE workspace_id = $1`,
      [s.workspaceId],
    );
    await t.infra.pool.query(GRANT_CASES_WRITE);
    await t.infra.pool.query(GRANT_CASES_WRITE); // idempotent
    const { rows } = await t.infra.pool.query<{ id: string; scopes: string[] }>(
      `SELECT id, scopes FROM api_keys WHERE workspace_id = $1`,
      [s.workspaceId],
    );
    const scopes = new Map(rows.map((r) => [r.id, r.scopes]));
    expect(scopes.get(s.keyId)).toContain('cases:write');
    expect(scopes.get(ci.id)).toEqual(['scans:write', 'triage:write', 'scans:read']);
  });
});

describe('exports carry the triage', () => {
  const exp = (query: string) => get(`/api/v1/exports/cases?${query}`);

  it('JSON Lines and CSV: the triage fields, with the triage filters', async () => {
    const jsonl = await exp('format=jsonl&priority=CRITICAL');
    expect(jsonl.statusCode).toBe(200);
    const lines = jsonl.body
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines.map((l: any) => l.title).sort()).toEqual(expected((i) => i < TRIAGED && i % 3 === 0));
    const f3 = lines.find((l: any) => l.title === 'F3');
    expect(f3).toMatchObject({
      triage: {
        priority: 'CRITICAL',
        recommendedAction: 'PATCH_IMMEDIATELY',
        reasoning: 'Reasoning for F3.',
      },
      triageStale: true,
    });
    const csv = await exp('format=csv&action=MITIGATE');
    const rows = parseCsv(csv.body, { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => r.title).sort()).toEqual(expected((i) => i < TRIAGED && i % 3 === 1));
    expect(rows[0]).toMatchObject({
      priority: 'HIGH',
      recommendedAction: 'MITIGATE',
      confidenceScore: '0.8',
    });
    expect(rows.find((r) => r.title === 'F7')).toMatchObject({ triageStale: 'true' });
    const untriaged = parseCsv((await exp('format=csv&triaged=false')).body, { columns: true }) as Record<
      string,
      string
    >[];
    expect(untriaged).toHaveLength(TOTAL - TRIAGED);
    expect(untriaged.every((r) => r.priority === '' && r.triagedAt === '')).toBe(true);
  });

  it('SARIF: level from the priority and the triage in properties, valid against the schema', async () => {
    const res = await exp('format=sarif&triaged=true');
    const log = JSON.parse(res.body);
    expect(validateSarif(log), JSON.stringify(validateSarif.errors?.slice(0, 3))).toBe(true);
    const results = log.runs[0].results as any[];
    expect(results).toHaveLength(TRIAGED);
    const medium = results.find((r) => r.properties.triage.priority === 'MEDIUM');
    expect(medium.level).toBe('warning');
    expect(medium.properties.triage).toMatchObject({ reasoning: expect.stringMatching(/^Reasoning for F/) });
  });

  it('CycloneDX VEX: ratings, analysis.detail and response from the triage, valid against the schema', async () => {
    const res = await exp('format=cyclonedx-vex&triaged=true');
    const bom = JSON.parse(res.body);
    expect(validateVex(bom), JSON.stringify(validateVex.errors?.slice(0, 3))).toBe(true);
    const byCase = new Map(
      (bom.vulnerabilities as any[]).map((v) => [
        v.properties.find((p: any) => p.name === 'vuln-triage:caseId').value,
        v,
      ]),
    );
    const f1 = byCase.get(byTitle.get('F1')!.id);
    expect(f1.analysis).toMatchObject({
      state: 'in_triage',
      detail: 'Reasoning for F1.',
      response: ['workaround_available'],
    });
    expect(f1.ratings).toContainEqual(expect.objectContaining({ severity: 'high', method: 'other' }));
    expect(byCase.get(byTitle.get('F0')!.id).analysis.response).toEqual(['update']);
    expect(byCase.get(byTitle.get('F2')!.id).analysis.response).toBeUndefined();
  });

  it('export jobs take the triage filters in their JSON filter', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/exports',
      headers: { 'x-api-key': owner.key },
      payload: {
        format: 'csv',
        filter: { priority: ['CRITICAL'], stale: true, triaged: true, action: ['PATCH_IMMEDIATELY'] },
      },
    });
    expect(res.statusCode, res.body).toBe(202);
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/v1/exports',
      headers: { 'x-api-key': owner.key },
      payload: { format: 'csv', filter: { priority: ['URGENT'] } },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'invalid_request', errors: [{ path: '/filter/priority/0' }] });
  });
});
