import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { importNvd } from '../../../src/domain/enrichment/nvd-import.js';
import {
  importLog,
  LOCAL,
  openEnrichmentDb,
  scratchDir,
  startFeedServer,
  type EnrichmentDb,
} from './enrichment-db.js';

let db: EnrichmentDb;
let scratch: Awaited<ReturnType<typeof scratchDir>>;

beforeAll(async () => {
  db = await openEnrichmentDb();
  scratch = await scratchDir();
});

afterAll(async () => {
  await db?.close();
  await scratch?.cleanup();
});

beforeEach(async () => {
  await db.pool.query('DELETE FROM cvss_scores');
});

interface CvssRow {
  cve_id: string;
  base_score: string;
  version: string;
  vector: string | null;
  source: string | null;
}

async function cvss(): Promise<CvssRow[]> {
  const { rows } = await db.pool.query<CvssRow>(
    'SELECT cve_id, base_score::text, version, vector, source FROM cvss_scores ORDER BY cve_id',
  );
  return rows;
}

const PAGE_1 = path.join(LOCAL, 'nvd-page-1.json');
const PAGE_2 = path.join(LOCAL, 'nvd-page-2.json');

/** What page 1 should store; each synthetic record exercises one rule (see test/fixtures/enrichment/README.md). */
const AFTER_PAGE_1: CvssRow[] = [
  {
    cve_id: 'CVE-2021-44228',
    base_score: '10.0',
    version: '3.1',
    vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H',
    source: 'nvd@nist.gov',
  },
  // v4.0 Secondary beats v3.1 Primary: the version decides first.
  {
    cve_id: 'CVE-2099-0001',
    base_score: '9.3',
    version: '4.0',
    vector: 'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N',
    source: 'cna@example.org',
  },
  // Within v4.0, the Primary listed second beats the Secondary listed first.
  {
    cve_id: 'CVE-2099-0002',
    base_score: '9.2',
    version: '4.0',
    vector: 'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N/E:A',
    source: 'nvd@nist.gov',
  },
  {
    cve_id: 'CVE-2099-0003',
    base_score: '7.8',
    version: '3.1',
    vector: 'CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H',
    source: 'nvd@nist.gov',
  },
  // v3.0: Primary 5.3 over a higher Secondary 5.9; v2 ignored.
  {
    cve_id: 'CVE-2099-0004',
    base_score: '5.3',
    version: '3.0',
    vector: 'CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N',
    source: 'nvd@nist.gov',
  },
  {
    cve_id: 'CVE-2099-0005',
    base_score: '10.0',
    version: '2.0',
    vector: 'AV:N/AC:L/Au:N/C:C/I:C/A:C',
    source: 'cna@example.org',
  },
  // v3.1 Secondary beats v2 Primary.
  {
    cve_id: 'CVE-2099-0007',
    base_score: '7.5',
    version: '3.1',
    vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H',
    source: 'cna@example.org',
  },
];

describe('NVD import', () => {
  it('chooses v4.0 > v3.1 > v3.0 > v2 and Primary within a version', async () => {
    const result = await importNvd(db.pool, { file: PAGE_1 });
    expect(result).toMatchObject({
      source: 'nvd',
      origin: 'nvd-page-1.json',
      rows: 7,
      withoutMetrics: 1,
      rejected: 0,
    });
    expect(await cvss()).toEqual(AFTER_PAGE_1);
    expect((await importLog(db.pool)).at(-1)).toEqual({ source: 'nvd', origin: 'nvd-page-1.json', rows: 7 });
  });

  it('upserts incrementally: a later file updates, adds and removes rejected CVEs, and leaves the rest', async () => {
    await importNvd(db.pool, { file: PAGE_1 });
    const { rows: before } = await db.pool.query<{ cve_id: string; updated_at: Date }>(
      "SELECT cve_id, updated_at FROM cvss_scores WHERE cve_id = 'CVE-2099-0001'",
    );
    const result = await importNvd(db.pool, { file: PAGE_2 });
    expect(result).toMatchObject({ rows: 3, withoutMetrics: 0, rejected: 1 });
    const byId = new Map((await cvss()).map((r) => [r.cve_id, r]));
    expect([...byId.keys()]).toEqual([
      'CVE-2021-44228',
      'CVE-2099-0001',
      'CVE-2099-0002',
      'CVE-2099-0003',
      'CVE-2099-0004',
      'CVE-2099-0006',
      'CVE-2099-0007',
      'CVE-2099-0008',
    ]);
    expect(byId.get('CVE-2099-0003')).toMatchObject({ base_score: '8.8', version: '3.1' });
    expect(byId.get('CVE-2099-0006')).toMatchObject({ base_score: '6.1', version: '3.1' });
    expect(byId.get('CVE-2099-0008')).toMatchObject({ base_score: '4.3', version: '3.1' });
    expect(byId.get('CVE-2099-0001')).toEqual(AFTER_PAGE_1[1]);
    // Re-importing the same page rewrites nothing: updated_at of an unchanged CVE stays.
    await importNvd(db.pool, { file: PAGE_1 });
    const { rows: after } = await db.pool.query<{ updated_at: Date }>(
      "SELECT updated_at FROM cvss_scores WHERE cve_id = 'CVE-2099-0001'",
    );
    expect(after[0]?.updated_at.getTime()).toBe(before[0]?.updated_at.getTime());
  });

  it('rejects a record with a non-numeric baseScore and keeps everything as it was', async () => {
    await importNvd(db.pool, { file: PAGE_1 });
    await expect(importNvd(db.pool, { file: path.join(LOCAL, 'nvd-bad-score.json') })).rejects.toMatchObject({
      code: 'malformed_input',
      message:
        'nvd import from nvd-bad-score.json failed: vulnerabilities[1] (CVE-2099-0009) cvssMetricV31[0]: cvssData.baseScore "9.8" is not a number in [0, 10]',
    });
    // CVE-2099-0008, valid and listed before the bad record, was rolled back with it.
    expect(await cvss()).toEqual(AFTER_PAGE_1);
  });

  it('rejects truncated JSON and a document that is not an NVD API response', async () => {
    await importNvd(db.pool, { file: PAGE_1 });
    const text = await readFile(PAGE_2);
    const truncated = path.join(scratch.dir, 'nvd-truncated.json');
    await writeFile(truncated, text.subarray(0, text.length - 200));
    await expect(importNvd(db.pool, { file: truncated })).rejects.toMatchObject({
      code: 'malformed_input',
      message: expect.stringMatching(/^nvd import from nvd-truncated\.json failed: invalid JSON \(Parser /),
    });
    const kevLike = path.join(scratch.dir, 'kev-like.json');
    await writeFile(kevLike, JSON.stringify({ catalogVersion: '1', vulnerabilities: [] }));
    await expect(importNvd(db.pool, { file: kevLike })).rejects.toMatchObject({
      code: 'malformed_input',
      message:
        'nvd import from kev-like.json failed: not an NVD CVE API 2.0 document: "format" is not "NVD_CVE"',
    });
    const array = path.join(scratch.dir, 'array.json');
    await writeFile(array, '[]');
    await expect(importNvd(db.pool, { file: array })).rejects.toMatchObject({
      code: 'malformed_input',
      message: 'nvd import from array.json failed: expected a JSON object at the top level',
    });
    expect(await cvss()).toEqual(AFTER_PAGE_1);
  });

  it('streams a gzipped page from a URL', async () => {
    const server = await startFeedServer({
      '/rest/json/cves/2.0': { body: gzipSync(await readFile(PAGE_1)) },
    });
    try {
      const result = await importNvd(db.pool, {
        url: `${server.baseUrl}/rest/json/cves/2.0?lastModStartDate=2026-09-01`,
      });
      expect(result).toMatchObject({ origin: `${server.baseUrl}/rest/json/cves/2.0`, rows: 7 });
      expect(await cvss()).toEqual(AFTER_PAGE_1);
    } finally {
      await server.close();
    }
  });

  it('handles a file with thousands of records in batches', async () => {
    const items = Array.from({ length: 2_500 }, (_, i) => ({
      cve: {
        id: `CVE-2098-${String(i + 10000)}`,
        vulnStatus: 'Analyzed',
        descriptions: [{ lang: 'en', value: 'x'.repeat(200) }],
        references: [{ url: 'https://example.org', source: 'cna@example.org' }],
        metrics: {
          cvssMetricV31: [
            {
              source: 'nvd@nist.gov',
              type: 'Primary',
              cvssData: { version: '3.1', baseScore: (i % 101) / 10, vectorString: null },
            },
          ],
        },
      },
    }));
    const file = path.join(scratch.dir, 'big.json');
    await writeFile(file, JSON.stringify({ format: 'NVD_CVE', version: '2.0', vulnerabilities: items }));
    expect(await importNvd(db.pool, { file })).toMatchObject({ rows: 2500 });
    const { rows } = await db.pool.query<{ n: number; top: string }>(
      "SELECT count(*)::int AS n, max(base_score)::text AS top FROM cvss_scores WHERE cve_id LIKE 'CVE-2098-%'",
    );
    expect(rows[0]).toEqual({ n: 2500, top: '10.0' });
  });
});
