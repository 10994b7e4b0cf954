import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { DAY } from '../../helpers/clock.js';
import { importKev } from '../../../src/domain/enrichment/index.js';
import { recordCaseTriage } from '../../../src/domain/cases/case-triage-store.js';
import { listCases } from '../../../src/domain/cases/case-store.js';
import {
  DEFAULT_SLA_POLICY,
  getSlaPolicy,
  putSlaPolicy,
} from '../../../src/domain/cases/sla-policy-store.js';

/** Due dates (docs/cases.md#due-dates-and-sla): computed on sighting, recomputed on priority, policy and KEV changes. */
const KEV_CVE = 'CVE-2099-20001';
/** Who sets the policy directly, as an operator would. */
const OPERATOR = { actor: 'operator', ip: null, userAgent: null };

let t: ScanTestApp;
let dir: string;

async function upload(key: string, findings: object[], query = ''): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/pipeline/scan?format=cli${query}`,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify({ tool: { name: 'sla-test', version: '1' }, findings }),
  });
  expect(res.statusCode, res.body).toBe(202);
  await waitForScan(t.app, key, (res.json() as { scanId: string }).scanId);
}

/** Each case's due date as the API answers it, by title. */
async function dueAts(
  workspaceId: string,
): Promise<Record<string, { dueAt: string | null; firstSeen: string }>> {
  const page = await listCases(t.infra.pool, workspaceId, { limit: 100, duplicates: 'include' });
  return Object.fromEntries(page.data.map((c) => [c.title, { dueAt: c.dueAt, firstSeen: c.firstSeen }]));
}

/** Days from first sighting to due date, by title (null: no due date). */
async function dueDays(workspaceId: string): Promise<Record<string, number | null>> {
  const cases = Object.entries(await dueAts(workspaceId)).sort(([a], [b]) => a.localeCompare(b));
  return Object.fromEntries(
    cases.map(([title, c]) => [
      title,
      c.dueAt === null ? null : Math.round((Date.parse(c.dueAt) - Date.parse(c.firstSeen)) / DAY),
    ]),
  );
}

async function caseId(workspaceId: string, title: string): Promise<string> {
  const { rows } = await t.infra.pool.query<{ id: string }>(
    `SELECT id FROM cases WHERE workspace_id = $1 AND title = $2`,
    [workspaceId, title],
  );
  return rows[0]!.id;
}

const FINDINGS = [
  { title: 'critical', severity: 'critical', asset: 'h1', ruleId: 'R1' },
  { title: 'high', severity: 'high', asset: 'h1', ruleId: 'R2' },
  { title: 'medium', severity: 'medium', asset: 'h1', ruleId: 'R3' },
  { title: 'low', severity: 'low', asset: 'h1', ruleId: 'R4' },
  { title: 'info', severity: 'info', asset: 'h1', ruleId: 'R5' },
];

beforeAll(async () => {
  t = await startScanApp();
  dir = await mkdtemp(path.join(tmpdir(), 'sla-'));
}, 60_000);
afterAll(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('due dates', () => {
  it('gives each new case the default days of its severity, and INFO none', async () => {
    const owner = await signUp(t.app);
    await upload(owner.key, FINDINGS);
    expect(await getSlaPolicy(t.infra.pool, owner.workspaceId)).toEqual(DEFAULT_SLA_POLICY);
    expect(await dueDays(owner.workspaceId)).toEqual({
      critical: 7,
      high: 30,
      medium: 90,
      low: 180,
      info: null,
    });
  });

  it('moves the due date with a triage priority, and a policy change recomputes every open case', async () => {
    const owner = await signUp(t.app);
    await upload(owner.key, FINDINGS);
    await recordCaseTriage(t.infra.pool, {
      workspaceId: owner.workspaceId,
      caseId: await caseId(owner.workspaceId, 'low'),
      keyId: null,
      answer: {
        priority: 'CRITICAL',
        recommendedAction: 'PATCH_IMMEDIATELY',
        reasoning: 'Exploited.',
        confidenceScore: 0.9,
        severityOverride: null,
        model: 'local:ssvc-2.0.3',
        triagedAt: new Date(),
        policyVersion: '1',
      },
    });
    expect((await dueDays(owner.workspaceId)).low).toBe(7);

    // Resolved cases keep the due date they were resolved against.
    await t.infra.pool.query(
      `UPDATE cases SET status = 'resolved' WHERE workspace_id = $1 AND title = 'high'`,
      [owner.workspaceId],
    );
    const stored = await putSlaPolicy(
      t.infra.pool,
      owner.workspaceId,
      {
        days: { CRITICAL: 3, HIGH: 14, MEDIUM: 60, LOW: 120, INFO: 365 },
        exposedDays: { ...DEFAULT_SLA_POLICY.exposedDays },
        maxAcceptanceDays: 90,
      },
      OPERATOR,
    );
    expect(stored.recomputed).toBe(4);
    expect(stored.policy.maxAcceptanceDays).toBe(90);
    expect(await dueDays(owner.workspaceId)).toEqual({
      critical: 3,
      high: 30,
      medium: 60,
      low: 3,
      info: 365,
    });
  });

  it('applies tighter days to cases of internet-exposed or high-criticality assets', async () => {
    const owner = await signUp(t.app);
    await putSlaPolicy(
      t.infra.pool,
      owner.workspaceId,
      {
        days: DEFAULT_SLA_POLICY.days,
        exposedDays: { CRITICAL: 2, HIGH: 10, MEDIUM: null, LOW: 200, INFO: null },
        maxAcceptanceDays: 365,
      },
      OPERATOR,
    );
    await upload(owner.key, FINDINGS.slice(0, 4), '&asset=edge&internetExposed=true');
    // LOW keeps its 180 days: tighter days never loosen.
    expect(await dueDays(owner.workspaceId)).toEqual({ critical: 2, high: 10, medium: 90, low: 180 });
  });

  it("lets a KEV entry's due date win when sooner, also once the catalog lists a CVE later", async () => {
    const owner = await signUp(t.app);
    await upload(owner.key, [
      { title: 'kev low', severity: 'low', cveIds: [KEV_CVE], asset: 'h2', ruleId: 'K1' },
      { title: 'kev critical', severity: 'critical', cveIds: [KEV_CVE], asset: 'h3', ruleId: 'K1' },
    ]);
    expect(await dueDays(owner.workspaceId)).toEqual({ 'kev critical': 7, 'kev low': 180 });
    const due = new Date(Date.now() + 20 * DAY).toISOString().slice(0, 10);
    const file = path.join(dir, 'kev.json');
    await writeFile(
      file,
      JSON.stringify({
        catalogVersion: '2099.01.01',
        count: 1,
        vulnerabilities: [{ cveID: KEV_CVE, dateAdded: '2099-01-01', dueDate: due }],
      }),
    );
    await importKev(t.infra.pool, { file });
    const rows = Object.entries(await dueAts(owner.workspaceId))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([title, c]) => ({ title, due: c.dueAt!.slice(0, 16) }));
    const endOfDue = new Date(Date.parse(`${due}T00:00:00Z`) + DAY).toISOString().slice(0, 16);
    expect(rows).toEqual([
      { title: 'kev critical', due: expect.not.stringMatching(endOfDue) as unknown },
      { title: 'kev low', due: endOfDue },
    ]);
    expect((await dueDays(owner.workspaceId))['kev critical']).toBe(7);
  });
});
