import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordCaseTriages } from '../../../src/domain/cases/case-triage-store.js';
import { importVulnrichment } from '../../../src/domain/enrichment/vulnrichment-import.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { signUp } from '../../helpers/test-app.js';

/** docs/cases.md#stale-triage: a new or changed CISA SSVC decision makes the cases triaged before it stale. */
const FOLDER = path.resolve('test/fixtures/enrichment/vulnrichment');
const RATED = 'CVE-2023-36140'; // 2023/36xxx/CVE-2023-36140.json: poc, automatable yes, total
const OTHER = 'CVE-2019-0344';

let t: ScanTestApp;
let owner: Awaited<ReturnType<typeof signUp>>;
let dir: string;
beforeAll(async () => {
  t = await startScanApp();
  owner = await signUp(t.app);
  dir = await mkdtemp(path.join(tmpdir(), 'cisa-stale-'));
});
afterAll(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

const stale = async (): Promise<Record<string, boolean>> => {
  const res = await t.app.inject({
    method: 'GET',
    url: '/api/v1/cases?limit=100',
    headers: { 'x-api-key': owner.key },
  });
  const cases = res.json().data as Array<{ title: string; triageStale: boolean }>;
  return Object.fromEntries(cases.map((c) => [c.title, c.triageStale]));
};

describe('a CISA Vulnrichment load and triaged cases', () => {
  it('marks stale the triaged cases of a CVE whose CISA decision is new, then changed; nothing else', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/pipeline/scan?format=cli',
      headers: { 'x-api-key': owner.key, 'content-type': 'application/json' },
      payload: JSON.stringify({
        tool: { name: 'stale-test', version: '1' },
        findings: [
          { title: 'rated', severity: 'high', cveIds: [RATED], asset: 'h1', ruleId: 'R1' },
          { title: 'other', severity: 'high', cveIds: [OTHER], asset: 'h2', ruleId: 'R1' },
          { title: 'untriaged', severity: 'high', cveIds: [RATED], asset: 'h3', ruleId: 'R1' },
        ],
      }),
    });
    expect(res.statusCode, res.body).toBe(202);
    const { scanId } = res.json() as { scanId: string };
    expect((await waitForScan(t.app, owner.key, scanId)).status).toBe('completed');
    const list = await t.app.inject({
      method: 'GET',
      url: '/api/v1/cases?limit=100',
      headers: { 'x-api-key': owner.key },
    });
    const ids = Object.fromEntries(
      (list.json().data as Array<{ title: string; id: string }>).map((c) => [c.title, c.id]),
    );
    const triage = (title: string) => ({
      workspaceId: owner.workspaceId,
      caseId: ids[title]!,
      keyId: owner.keyId,
      answer: {
        priority: 'MEDIUM' as const,
        recommendedAction: 'PATCH_SCHEDULED' as const,
        reasoning: 'before CISA',
        confidenceScore: 0.8,
        severityOverride: null,
        model: 'local:ssvc-2.0.3',
        triagedAt: new Date().toISOString(),
        policyVersion: '2026-11-27.1',
      },
    });

    // Only the RATED case is triaged before CISA's decision is loaded.
    await recordCaseTriages(t.infra.pool, [triage('rated')]);
    const only = path.join(dir, 'only');
    await cp(path.join(FOLDER, '2023/36xxx'), path.join(only, '2023/36xxx'), { recursive: true });
    await importVulnrichment(t.infra.pool, { file: only });
    expect(await stale()).toEqual({ rated: true, other: false, untriaged: false });

    // Triaged again, and the same decision loaded again: nothing changes.
    await recordCaseTriages(t.infra.pool, [triage('rated'), triage('other')]);
    await importVulnrichment(t.infra.pool, { file: only });
    expect(await stale()).toEqual({ rated: false, other: false, untriaged: false });

    // CISA re-scores RATED later: its case is stale again, the other one is not.
    const file = path.join(only, '2023/36xxx/CVE-2023-36140.json');
    const text = await readFile(file, 'utf8');
    await writeFile(
      file,
      text
        .replace(/"Exploitation": "poc"/i, '"Exploitation": "active"')
        .replace('2024-09-26T', '2025-01-02T'),
    );
    await importVulnrichment(t.infra.pool, { file: only });
    expect(await stale()).toEqual({ rated: true, other: false, untriaged: false });
  });
});
