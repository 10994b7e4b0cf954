import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { DAY } from '../../helpers/clock.js';
import { problemDocument } from '../../helpers/problem.js';
import { importKev } from '../../../src/domain/enrichment/index.js';
import { recordCaseTriage } from '../../../src/domain/cases/case-triage-store.js';

/**
 * SLA states and the due-date filters and sort of the case list (docs/cases.md#due-dates-and-sla),
 * read at the app's injected clock.
 */
let t: ScanTestApp;
let dir: string;
let owner: Awaited<ReturnType<typeof signUp>>;
let writer: { key: string };
const start = Date.now();

interface ListedCase {
  id: string;
  title: string;
  status: string;
  firstSeen: string;
  dueAt: string | null;
  sla: string | null;
}

async function list(query = '', key = owner.key): Promise<{ data: ListedCase[]; nextCursor: string | null }> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/v1/cases${query}`,
    headers: { 'x-api-key': key },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { data: ListedCase[]; nextCursor: string | null };
}
const titles = async (query: string) => (await list(query)).data.map((c) => c.title);
const byTitle = async (title: string) => (await list()).data.find((c) => c.title === title)!;

beforeAll(async () => {
  t = await startScanApp();
  dir = await mkdtemp(path.join(tmpdir(), 'sla-list-'));
  const kev = path.join(dir, 'kev.json');
  await writeFile(
    kev,
    JSON.stringify({
      catalogVersion: '2020.01.01',
      count: 1,
      vulnerabilities: [{ cveID: 'CVE-2099-30001', dateAdded: '2020-01-01', dueDate: '2020-01-15' }],
    }),
  );
  await importKev(t.infra.pool, { file: kev });
  owner = await signUp(t.app);
  writer = await createKey(t.app, owner, ['cases:write', 'scans:read'], 'writer');
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/pipeline/scan?format=cli',
    headers: { 'x-api-key': owner.key, 'content-type': 'application/json' },
    payload: JSON.stringify({
      tool: { name: 'sla-list', version: '1' },
      findings: [
        { title: 'critical', severity: 'critical', asset: 'h1', ruleId: 'R1' },
        { title: 'high', severity: 'high', asset: 'h1', ruleId: 'R2' },
        { title: 'medium', severity: 'medium', asset: 'h1', ruleId: 'R3' },
        { title: 'info', severity: 'info', asset: 'h1', ruleId: 'R4' },
        { title: 'kev overdue', severity: 'low', asset: 'h1', ruleId: 'R5', cveIds: ['CVE-2099-30001'] },
      ],
    }),
  });
  await waitForScan(t.app, owner.key, (res.json() as { scanId: string }).scanId);
}, 60_000);
afterAll(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('SLA states', () => {
  it('move from on_track to due_soon to breached with the clock, and back with a lower priority', async () => {
    t.clock.set(new Date(start));
    expect((await byTitle('high')).sla).toBe('on_track');
    expect((await byTitle('info')).sla).toBeNull();
    expect((await byTitle('kev overdue')).sla).toBe('breached');
    // The last 20% of 30 days: from day 24.
    t.clock.set(new Date(start + 25 * DAY));
    expect((await byTitle('high')).sla).toBe('due_soon');
    t.clock.set(new Date(start + 31 * DAY));
    const high = await byTitle('high');
    expect(high.sla).toBe('breached');

    await recordCaseTriage(t.infra.pool, {
      workspaceId: owner.workspaceId,
      caseId: high.id,
      keyId: null,
      answer: {
        priority: 'LOW',
        recommendedAction: 'PATCH_SCHEDULED',
        reasoning: 'Internal only.',
        confidenceScore: 0.8,
        severityOverride: null,
        model: 'local:ssvc-2.0.3',
        triagedAt: new Date(),
        policyVersion: '1',
      },
    });
    const lowered = await byTitle('high');
    expect(Date.parse(lowered.dueAt!) - Date.parse(lowered.firstSeen)).toBe(180 * DAY);
    expect(lowered.sla).toBe('on_track');
  });

  it('gives a resolved case met or missed, and none to a risk-accepted one', async () => {
    t.clock.set(new Date(start));
    const patch = async (title: string, status: string) => {
      const res = await t.app.inject({
        method: 'PATCH',
        url: `/api/v1/cases/${(await byTitle(title)).id}`,
        headers: { 'x-api-key': writer.key },
        // A risk acceptance names its end and why (docs/cases.md#risk-acceptance).
        payload:
          status === 'risk_accepted'
            ? {
                status,
                note: 'accepted for the test',
                expiresAt: new Date(t.clock().getTime() + 30 * DAY).toISOString(),
              }
            : { status },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as ListedCase;
    };
    expect(await patch('critical', 'resolved')).toMatchObject({ status: 'resolved', sla: 'met' });
    expect(await patch('kev overdue', 'resolved')).toMatchObject({ status: 'resolved', sla: 'missed' });
    expect(await patch('medium', 'risk_accepted')).toMatchObject({ sla: null });
    // A resolved case keeps its state whatever the clock says.
    t.clock.set(new Date(start + 400 * DAY));
    expect((await byTitle('critical')).sla).toBe('met');
    expect(await titles('?sla=met,missed')).toEqual(['kev overdue', 'critical']);
    await patch('critical', 'open');
    await patch('kev overdue', 'open');
    await patch('medium', 'open');
  });
});

describe('filters and sort', () => {
  it('filter on sla and dueBefore', async () => {
    t.clock.set(new Date(start + 8 * DAY));
    expect(await titles('?sla=breached')).toEqual(['kev overdue', 'critical']);
    expect(await titles('?sla=on_track,due_soon')).toEqual(['medium', 'high']);
    const soon = new Date(start + 8 * DAY).toISOString();
    expect(await titles(`?dueBefore=${soon}`)).toEqual(['kev overdue', 'critical']);
    expect(await titles('?dueBefore=2020-02-01')).toEqual(['kev overdue']);
    const findings = await t.app.inject({
      method: 'GET',
      url: '/api/v1/findings?sla=breached',
      headers: { 'x-api-key': owner.key },
    });
    expect((findings.json() as { data: { title: string }[] }).data.map((f) => f.title).sort()).toEqual([
      'critical',
      'kev overdue',
    ]);
  });

  it('sorts by due date, soonest first and none last, paging each case exactly once', async () => {
    const all = await titles('?sort=dueAt');
    expect(all).toEqual(['kev overdue', 'critical', 'medium', 'high', 'info']);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await list(`?sort=dueAt&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.data.map((c) => c.title));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all);
  });

  it.each([
    [
      '?sla=late',
      '/querystring/sla',
      'must be one or more of on_track, due_soon, breached, met, missed, separated by commas',
    ],
    [
      '?dueBefore=tomorrow',
      '/querystring/dueBefore',
      'must be a date (YYYY-MM-DD, UTC) or an ISO 8601 instant with a time zone',
    ],
    [
      '?dueBefore=2026-02-30',
      '/querystring/dueBefore',
      'must be a date (YYYY-MM-DD, UTC) or an ISO 8601 instant with a time zone',
    ],
    [
      '?dueBefore=2026-11-01T10:00',
      '/querystring/dueBefore',
      'must be a date (YYYY-MM-DD, UTC) or an ISO 8601 instant with a time zone',
    ],
    ['?sort=due', '/querystring/sort', 'must be one of priority, lastSeen, firstSeen, epss, dueAt'],
  ])('refuses %s with the whole problem body', async (query, pathName, message) => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/cases${query}`,
      headers: { 'x-api-key': owner.key },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      ...problemDocument(
        400,
        'invalid_request',
        'Invalid request',
        'The request has invalid fields; see errors.',
      ),
      errors: [{ path: pathName, message }],
    });
  });

  it("shows another workspace's key none of these cases", async () => {
    const other = await signUp(t.app);
    expect((await list('?sla=breached', other.key)).data).toEqual([]);
    expect((await list('?sort=dueAt', other.key)).data).toEqual([]);
  });
});
