import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { importEpss, importKev } from '../../../src/domain/enrichment/index.js';
import {
  listCaseTriageHistory,
  markStaleForCves,
  recordCaseTriage,
  recordCaseTriages,
  type CaseTriageAnswer,
} from '../../../src/domain/cases/case-triage-store.js';

/** The case triage store (docs/cases.md#triage-on-a-case): current answer + history in one statement, set-based stale marking. */
const CVE_A = 'CVE-2099-10001';
const CVE_B = 'CVE-2099-10002';
const SCAN = {
  tool: { name: 'store-test', version: '1' },
  findings: [
    { title: 'A on h1', severity: 'high', cveIds: [CVE_A], asset: 'h1', ruleId: 'R1' },
    { title: 'A on h2', severity: 'high', cveIds: [CVE_A], asset: 'h2', ruleId: 'R1' },
    { title: 'B on h1', severity: 'medium', cveIds: [CVE_B], asset: 'h1', ruleId: 'R2' },
    { title: 'A on h3, untriaged', severity: 'low', cveIds: [CVE_A], asset: 'h3', ruleId: 'R1' },
    { title: 'no CVE', severity: 'low', cveIds: [], asset: 'h1', ruleId: 'R3' },
  ],
};

let t: ScanTestApp;
let owner: Awaited<ReturnType<typeof signUp>>;
let dir: string;
const cases = new Map<string, string>(); // title -> id

const answer = (over: Partial<CaseTriageAnswer> = {}): CaseTriageAnswer => ({
  priority: 'HIGH',
  recommendedAction: 'PATCH_SCHEDULED',
  reasoning: 'Reachable service, patch available.',
  confidenceScore: 0.82,
  severityOverride: null,
  model: 'local:ssvc-2.0.3',
  triagedAt: '2026-11-24T08:00:00.000Z',
  policyVersion: '2026-11-24.1',
  ...over,
});

async function stale(): Promise<string[]> {
  const { rows } = await t.infra.pool.query<{ title: string }>(
    `SELECT title FROM cases WHERE triage_stale ORDER BY title`,
  );
  return rows.map((r) => r.title);
}

async function kevFile(cves: string[]): Promise<string> {
  const file = path.join(dir, `kev-${cves.length}-${Date.now()}.json`);
  await writeFile(
    file,
    JSON.stringify({
      catalogVersion: '2099.01.01',
      count: cves.length,
      vulnerabilities: cves.map((cveID) => ({ cveID, dateAdded: '2099-01-01', dueDate: '2099-01-21' })),
    }),
  );
  return file;
}

beforeAll(async () => {
  t = await startScanApp();
  dir = await mkdtemp(path.join(tmpdir(), 'case-triage-'));
  owner = await signUp(t.app);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/pipeline/scan?format=cli',
    headers: { 'x-api-key': owner.key, 'content-type': 'application/json' },
    payload: JSON.stringify(SCAN),
  });
  expect(res.statusCode, res.body).toBe(202);
  await waitForScan(t.app, owner.key, (res.json() as { scanId: string }).scanId);
  const { rows } = await t.infra.pool.query<{ id: string; title: string }>(`SELECT id, title FROM cases`);
  for (const r of rows) cases.set(r.title, r.id);
  expect(cases.size).toBe(5);
}, 60_000);
afterAll(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('recordCaseTriage', () => {
  it('sets the current triage and appends the history in one statement', async () => {
    const ws = owner.workspaceId;
    for (const title of ['A on h1', 'A on h2', 'B on h1']) {
      expect(
        await recordCaseTriage(t.infra.pool, {
          workspaceId: ws,
          caseId: cases.get(title)!,
          answer: answer(),
          keyId: null,
        }),
      ).toBe(true);
    }
    const { rows } = await t.infra.pool.query(
      `SELECT priority, recommended_action, priority_rank, triage_stale, triaged_kev FROM cases WHERE id = $1`,
      [cases.get('A on h1')],
    );
    expect(rows[0]).toEqual({
      priority: 'HIGH',
      recommended_action: 'PATCH_SCHEDULED',
      priority_rank: 1,
      triage_stale: false,
      triaged_kev: false,
    });
    const history = await listCaseTriageHistory(
      t.infra.pool,
      { workspaceId: ws, caseId: cases.get('A on h1')! },
      { limit: 10 },
    );
    expect(history).toEqual({
      data: [
        {
          object: 'case_triage',
          id: expect.any(String),
          priority: 'HIGH',
          recommendedAction: 'PATCH_SCHEDULED',
          reasoning: 'Reachable service, patch available.',
          confidenceScore: 0.82,
          severityOverride: null,
          model: 'local:ssvc-2.0.3',
          triagedAt: '2026-11-24T08:00:00.000Z',
          policyVersion: '2026-11-24.1',
          actor: null,
          enrichment: { kev: false, epss: null, cvssScore: null },
        },
      ],
      nextCursor: null,
    });
  });

  it("refuses another workspace's case and keeps the later of two answers current", async () => {
    const other = await signUp(t.app);
    expect(
      await recordCaseTriage(t.infra.pool, {
        workspaceId: other.workspaceId,
        caseId: cases.get('no CVE')!,
        answer: answer(),
        keyId: null,
      }),
    ).toBe(false);
    expect(
      await recordCaseTriage(t.infra.pool, {
        workspaceId: owner.workspaceId,
        caseId: 'not-a-uuid',
        answer: answer(),
        keyId: null,
      }),
    ).toBe(false);
    const id = cases.get('no CVE')!;
    const later = answer({ priority: 'LOW', triagedAt: '2026-11-24T09:00:00.000Z' });
    const earlier = answer({ priority: 'CRITICAL', triagedAt: '2026-11-24T07:00:00.000Z' });
    const input = (a: CaseTriageAnswer) => ({
      workspaceId: owner.workspaceId,
      caseId: id,
      answer: a,
      keyId: null,
    });
    expect(await recordCaseTriages(t.infra.pool, [input(later), input(earlier)])).toBe(2);
    // An older answer committed afterwards goes to the history only.
    expect(
      await recordCaseTriages(t.infra.pool, [
        input(answer({ priority: 'INFO', triagedAt: '2026-11-24T06:00:00.000Z' })),
      ]),
    ).toBe(1);
    const { rows } = await t.infra.pool.query(`SELECT priority FROM cases WHERE id = $1`, [id]);
    expect(rows[0]).toEqual({ priority: 'LOW' });

    const first = await listCaseTriageHistory(
      t.infra.pool,
      { workspaceId: owner.workspaceId, caseId: id },
      { limit: 2 },
    );
    expect(first.data.map((h) => h.priority)).toEqual(['INFO', 'CRITICAL']);
    const rest = await listCaseTriageHistory(
      t.infra.pool,
      { workspaceId: owner.workspaceId, caseId: id },
      { limit: 2, cursor: first.nextCursor! },
    );
    expect(rest).toMatchObject({ data: [{ priority: 'LOW' }], nextCursor: null });
    const foreign = await listCaseTriageHistory(
      t.infra.pool,
      { workspaceId: other.workspaceId, caseId: id },
      { limit: 2 },
    );
    expect(foreign.data).toEqual([]);
  });
});

describe('stale marking', () => {
  it('a KEV load that adds a CVE marks exactly the triaged cases carrying it stale', async () => {
    expect(await stale()).toEqual([]);
    await importKev(t.infra.pool, { file: await kevFile([CVE_A, 'CVE-2099-10009']) });
    expect(await stale()).toEqual(['A on h1', 'A on h2']);
    // Loading the same catalog again changes nothing; a new answer clears the mark.
    await importKev(t.infra.pool, { file: await kevFile([CVE_A, 'CVE-2099-10009']) });
    await recordCaseTriage(t.infra.pool, {
      workspaceId: owner.workspaceId,
      caseId: cases.get('A on h1')!,
      answer: answer({ priority: 'CRITICAL', triagedAt: '2026-11-24T10:00:00.000Z' }),
      keyId: null,
    });
    expect(await stale()).toEqual(['A on h2']);
    // The CVE leaving the catalog makes the case triaged while it was listed stale.
    await importKev(t.infra.pool, { file: await kevFile(['CVE-2099-10009']) });
    expect(await stale()).toEqual(['A on h1', 'A on h2']);
  });

  it('an EPSS load marks the cases whose EPSS moved by 0.1 or more since their triage', async () => {
    const epss = async (score: number) => {
      const file = path.join(dir, `epss-${score}.csv`);
      await writeFile(
        file,
        `#model_version:v1,score_date:2099-01-01T00:00:00Z\ncve,epss,percentile\n${CVE_B},${score},0.5\n`,
      );
      await importEpss(t.infra.pool, { file });
    };
    await epss(0.05);
    expect(await stale()).not.toContain('B on h1');
    await epss(0.09); // 0.09 from the triage's none: still under 0.1
    expect(await stale()).not.toContain('B on h1');
    await epss(0.1);
    expect(await stale()).toContain('B on h1');
  });

  it('marks nothing for an empty list of CVEs and never touches untriaged cases', async () => {
    expect(await markStaleForCves(t.infra.pool, [])).toBe(0);
    expect(await markStaleForCves(t.infra.pool, null)).toBe(0);
    expect(await stale()).not.toContain('A on h3, untriaged');
  });
});
