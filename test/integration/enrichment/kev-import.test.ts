import { copyFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importKev } from '../../../src/domain/enrichment/kev-import.js';
import { EnrichmentImportError } from '../../../src/domain/enrichment/import-error.js';
import {
  importLog,
  KEV_CATALOG,
  LOCAL,
  openEnrichmentDb,
  scratchDir,
  type EnrichmentDb,
} from './enrichment-db.js';

// Expected values computed independently from the fixture with jq, e.g.
//   jq '.vulnerabilities|length'                                                  → 1404
//   jq '[.vulnerabilities[]|select(.knownRansomwareCampaignUse=="Known")]|length' → 293
//   jq '[.vulnerabilities[]|select(.vendorProject=="Microsoft")]|length'          → 340
//   jq -r '[.vulnerabilities[].dateAdded]|min, max'                               → 2021-11-03, 2025-08-25

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

async function kevRow(cveId: string): Promise<Record<string, unknown> | undefined> {
  const { rows } = await db.pool.query(
    `SELECT cve_id, vendor_project, product, vulnerability_name, to_char(date_added, 'YYYY-MM-DD') AS date_added,
            to_char(due_date, 'YYYY-MM-DD') AS due_date, known_ransomware, catalog_version
       FROM kev_entries WHERE cve_id = $1`,
    [cveId],
  );
  return rows[0];
}

describe('KEV import', () => {
  it('loads the 2025.08.25 catalog: 1,404 entries with their fields', async () => {
    const result = await importKev(db.pool, { file: KEV_CATALOG });
    expect(result).toMatchObject({
      source: 'kev',
      origin: 'known_exploited_vulnerabilities.json.gz',
      rows: 1404,
      catalogVersion: '2025.08.25',
    });
    const { rows } = await db.pool.query<{
      n: number;
      known: number;
      microsoft: number;
      first: string;
      last: string;
    }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE known_ransomware)::int AS known,
              count(*) FILTER (WHERE vendor_project = 'Microsoft')::int AS microsoft,
              to_char(min(date_added), 'YYYY-MM-DD') AS first, to_char(max(date_added), 'YYYY-MM-DD') AS last
         FROM kev_entries`,
    );
    expect(rows[0]).toEqual({ n: 1404, known: 293, microsoft: 340, first: '2021-11-03', last: '2025-08-25' });
    expect(await kevRow('CVE-2021-44228')).toEqual({
      cve_id: 'CVE-2021-44228',
      vendor_project: 'Apache',
      product: 'Log4j2',
      vulnerability_name: 'Apache Log4j2 Remote Code Execution Vulnerability',
      date_added: '2021-12-10',
      due_date: '2021-12-24',
      known_ransomware: true,
      catalog_version: '2025.08.25',
    });
    expect(await kevRow('CVE-2025-48384')).toEqual({
      cve_id: 'CVE-2025-48384',
      vendor_project: 'Git',
      product: 'Git',
      vulnerability_name: 'Git Link Following Vulnerability',
      date_added: '2025-08-25',
      due_date: '2025-09-15',
      known_ransomware: false,
      catalog_version: '2025.08.25',
    });
    expect(await kevRow('CVE-2002-0367')).toMatchObject({
      vendor_project: 'Microsoft',
      product: 'Windows',
      date_added: '2022-03-03',
      due_date: '2022-03-24',
      known_ransomware: false,
    });
    expect((await importLog(db.pool)).at(-1)).toEqual({
      source: 'kev',
      origin: 'known_exploited_vulnerabilities.json.gz',
      rows: 1404,
    });
  });

  it('replaces the whole catalog on reload: entries no longer listed are gone', async () => {
    await importKev(db.pool, { file: KEV_CATALOG });
    const result = await importKev(db.pool, { file: path.join(LOCAL, 'kev-small.json') });
    expect(result).toMatchObject({ rows: 2, catalogVersion: '2026.09.29' });
    const { rows } = await db.pool.query<{ cve_id: string; catalog_version: string }>(
      'SELECT cve_id, catalog_version FROM kev_entries ORDER BY cve_id',
    );
    expect(rows).toEqual([
      { cve_id: 'CVE-2021-44228', catalog_version: '2026.09.29' },
      { cve_id: 'CVE-2099-0001', catalog_version: '2026.09.29' },
    ]);
    expect(await kevRow('CVE-2025-48384')).toBeUndefined();
  });

  it('rejects an entry with an impossible date and keeps the previous catalog', async () => {
    await importKev(db.pool, { file: KEV_CATALOG });
    const before = (await importLog(db.pool)).length;
    const err = await importKev(db.pool, { file: path.join(LOCAL, 'kev-bad-date.json') }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(EnrichmentImportError);
    expect(err).toMatchObject({
      code: 'malformed_input',
      message:
        'kev import from kev-bad-date.json failed: vulnerabilities[1] (CVE-2099-0001): dateAdded "2026-13-45" is not a YYYY-MM-DD date',
    });
    const { rows } = await db.pool.query<{ n: number; version: string }>(
      'SELECT count(*)::int AS n, max(catalog_version) AS version FROM kev_entries',
    );
    expect(rows[0]).toEqual({ n: 1404, version: '2025.08.25' });
    expect((await importLog(db.pool)).length).toBe(before);
  });

  it('rejects a truncated catalog as invalid JSON and keeps the previous one', async () => {
    await importKev(db.pool, { file: KEV_CATALOG });
    const text = gunzipSync(await readFile(KEV_CATALOG));
    const truncated = path.join(scratch.dir, 'kev-truncated.json');
    await writeFile(truncated, text.subarray(0, Math.floor(text.length / 2)));
    await expect(importKev(db.pool, { file: truncated })).rejects.toMatchObject({
      code: 'malformed_input',
      message: expect.stringMatching(/^kev import from kev-truncated\.json failed: invalid JSON \(Parser /),
    });
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM kev_entries');
    expect(rows[0]?.n).toBe(1404);
  });

  it('rejects JSON documents that are not a KEV catalog', async () => {
    const nvd = path.join(scratch.dir, 'not-kev.json');
    await copyFile(path.join(LOCAL, 'nvd-page-2.json'), nvd);
    await expect(importKev(db.pool, { file: nvd })).rejects.toMatchObject({
      code: 'malformed_input',
      message: 'kev import from not-kev.json failed: vulnerabilities[0]: cveID undefined is not a CVE id',
    });
    const noVersion = path.join(scratch.dir, 'no-version.json');
    await writeFile(noVersion, JSON.stringify({ title: 'x', count: 0, vulnerabilities: [] }));
    await expect(importKev(db.pool, { file: noVersion })).rejects.toMatchObject({
      code: 'malformed_input',
      message: 'kev import from no-version.json failed: not a KEV catalog: no catalogVersion',
    });
    const empty = path.join(scratch.dir, 'empty.json');
    await writeFile(empty, JSON.stringify({ catalogVersion: '2026.01.01', count: 0, vulnerabilities: [] }));
    await expect(importKev(db.pool, { file: empty })).rejects.toMatchObject({
      code: 'malformed_input',
      message: 'kev import from empty.json failed: the catalog lists no vulnerabilities',
    });
  });

  it('reports a missing file as source_unavailable', async () => {
    await expect(importKev(db.pool, { file: path.join(scratch.dir, 'nope.json') })).rejects.toMatchObject({
      code: 'source_unavailable',
      message: 'kev import from nope.json failed: cannot read the file (ENOENT)',
    });
  });
});
