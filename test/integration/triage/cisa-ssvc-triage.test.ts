import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importKev } from '../../../src/domain/enrichment/kev-import.js';
import { importVulnrichment } from '../../../src/domain/enrichment/vulnrichment-import.js';
import { signUp, startTestApp, type TestApp } from '../../helpers/test-app.js';

const KEV = path.resolve('test/fixtures/enrichment/known_exploited_vulnerabilities.json.gz');
const VULNRICHMENT = path.resolve('test/fixtures/enrichment/vulnrichment');
/** CISA rated it exploitation poc, automatable yes, technical impact total (2.0.3); not in KEV. */
const RATED = 'CVE-2023-36140';

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp();
  await importKev(t.infra.pool, { file: KEV });
  await importVulnrichment(t.infra.pool, { file: VULNRICHMENT });
  key = (await signUp(t.app, { plan: 'trial' })).key;
});
afterAll(async () => {
  await t?.close();
});

const triage = async (payload: object) => {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/triage',
    headers: { 'x-api-key': key },
    payload,
  });
  expect(res.statusCode).toBe(200);
  return res.json<{ priority: string; recommendedAction: string; reasoning: string; model: string }>();
};

describe('triage of a CVE CISA has rated (local engine)', () => {
  it('decides on CISA’s decision points and cites them', async () => {
    const answer = await triage({
      cveIds: [RATED],
      title: 'Remote code execution in the admin console',
      severity: 'HIGH',
      asset: { criticality: 'CRITICAL', internetExposed: true },
    });
    expect(answer.model).toMatch(/^local:/);
    expect(answer.reasoning).toContain(
      `CISA rated ${RATED}: exploitation poc, automatable yes, technical impact total [CISA SSVC 2.0.3, 20`,
    );
    // poc + automatable + total impact on a high-mission asset: SSVC Attend (CISA Coordinator 2.0.3).
    expect(answer.reasoning).toContain('SSVC 2.0.3 decision: Attend');
    expect(['HIGH', 'CRITICAL', 'MEDIUM']).toContain(answer.priority);
    expect(answer.recommendedAction).not.toMatch(/MONITOR|ACCEPT_RISK/);
  });

  it('derives the points itself for a CVE CISA has not rated', async () => {
    const answer = await triage({
      cveIds: ['CVE-2099-0001'],
      title: 'Remote code execution in the admin console',
      severity: 'HIGH',
      asset: { criticality: 'CRITICAL', internetExposed: true },
    });
    expect(answer.reasoning).not.toContain('CISA SSVC');
  });
});
