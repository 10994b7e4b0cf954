import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startTestApp, TEST_PEPPER, type TestApp } from '../../helpers/test-app.js';
import { loadConfig } from '../../../src/lib/config.js';
import { createLogger } from '../../../src/lib/logger.js';
import { prepareDayOneEnrichment, SHIPPED_KEV_SNAPSHOT } from '../../../src/app/day-one-enrichment.js';
import { importEpss } from '../../../src/domain/enrichment/epss-import.js';
import { importKev } from '../../../src/domain/enrichment/kev-import.js';

const KEV_COMMAND =
  'npm run admin -- enrich --kev https://www.cisa.gov/sites/default/files/feeds/known_exploited_vulnerabilities.json';
const EPSS_COMMAND =
  'npm run admin -- enrich --epss https://epss.empiricalsecurity.com/epss_scores-current.csv.gz';
const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/enrichment');

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const prepare = (snapshot?: string) =>
  prepareDayOneEnrichment(
    loadConfig({ DATABASE_URL: t.databaseUrl, KEY_PEPPER: TEST_PEPPER }),
    t.infra.pool,
    createLogger('silent'),
    snapshot,
  );

async function kevImports(): Promise<number> {
  const { rows } = await t.infra.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM enrichment_imports WHERE source = 'kev'",
  );
  return rows[0]!.n;
}

describe('KEV on day one: the shipped snapshot at the first start', () => {
  it('starts without KEV when the snapshot cannot be read, and says how to load it', async () => {
    expect(await prepare(path.join(FIXTURES, 'no-such-snapshot.json.gz'))).toEqual([
      `CISA KEV: not loaded. Load it: ${KEV_COMMAND}`,
      `FIRST EPSS: not loaded (not shipped: the daily file is large). Load it: ${EPSS_COMMAND}`,
    ]);
  });

  it('loads the shipped snapshot into a fresh database and names its catalog date in the banner', async () => {
    const lines = await prepare();
    expect(lines[0]).toMatch(
      /^CISA KEV: catalog 2025\.08\.25 \(1,404 entries, loaded \d{4}-\d{2}-\d{2}\)\. Refresh: npm run admin -- enrich --kev https:\/\/www\.cisa\.gov\//,
    );
    expect(lines[1]).toBe(
      `FIRST EPSS: not loaded (not shipped: the daily file is large). Load it: ${EPSS_COMMAND}`,
    );
    expect(await kevImports()).toBe(1);
  });

  it('a Log4Shell triage through the API then cites CISA KEV', async () => {
    const owner = await signUp(t.app, { plan: 'trial' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/triage',
      headers: { 'x-api-key': owner.key },
      payload: { cveIds: ['CVE-2021-44228'], title: 'Log4Shell in billing-api', severity: 'CRITICAL' },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { reasoning: string; priority: string };
    expect(body.reasoning).toContain("CVE-2021-44228 is in CISA's Known Exploited Vulnerabilities catalog");
    expect(body.reasoning).not.toContain('no KEV, EPSS or CVSS record');
    expect(['CRITICAL', 'HIGH']).toContain(body.priority);
  });

  it('never replaces a catalog already loaded (a later start, or after a refresh)', async () => {
    await importKev(t.infra.pool, { file: path.join(FIXTURES, 'kev-small.json') });
    const before = await kevImports();
    const lines = await prepare(SHIPPED_KEV_SNAPSHOT);
    expect(await kevImports()).toBe(before);
    expect(lines[0]).toMatch(/^CISA KEV: catalog \S+ \(2 entries, loaded /);
  });

  it('names the EPSS score date once EPSS is loaded', async () => {
    await importEpss(t.infra.pool, { file: path.join(FIXTURES, 'epss_scores-sample.csv') });
    expect((await prepare())[1]).toBe(`FIRST EPSS: scores of 2026-09-29 (29 CVEs). Refresh: ${EPSS_COMMAND}`);
  });
});
