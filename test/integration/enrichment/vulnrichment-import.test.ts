import { cp, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findEnrichment } from '../../../src/domain/enrichment/enrichment-store.js';
import { importVulnrichment } from '../../../src/domain/enrichment/vulnrichment-import.js';
import { LOCAL, openEnrichmentDb, scratchDir, startFeedServer, type EnrichmentDb } from './enrichment-db.js';

/** 300 real CVE JSON 5 records of CISA's Vulnrichment repository, in its own layout. */
const FOLDER = path.join(LOCAL, 'vulnrichment');
const ONE = '2019/0xxx/CVE-2019-0344.json';

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

const stored = async () =>
  (
    await db.pool.query<{ n: number; changed: Date }>(
      'SELECT count(*)::int AS n, max(updated_at) AS changed FROM cisa_ssvc',
    )
  ).rows[0]!;

/** The records of the folder as JSON Lines, one record a line. */
async function jsonLines(): Promise<string> {
  const names = (await readdir(FOLDER, { recursive: true })).filter((f) => f.endsWith('.json'));
  const lines = await Promise.all(
    names.map(async (f) => JSON.stringify(JSON.parse(await readFile(path.join(FOLDER, f), 'utf8')))),
  );
  return lines.join('\n') + '\n';
}

describe('importVulnrichment', () => {
  it('loads CISA’s decisions from a checkout’s folder, and the lookup returns them', async () => {
    const result = await importVulnrichment(db.pool, { file: FOLDER });
    expect(result).toMatchObject({ source: 'vulnrichment', origin: 'vulnrichment', rows: 300, records: 300 });
    expect((await stored()).n).toBe(300);
    const [one] = await findEnrichment(db.pool, ['CVE-2019-0344']);
    expect(one).toMatchObject({
      cveId: 'CVE-2019-0344',
      kev: false,
      cvssScore: null,
      cisaSsvc: {
        exploitation: 'active',
        automatable: 'yes',
        technicalImpact: 'total',
        version: '2.0.3',
        scoredAt: new Date('2024-10-04T13:32:40.662Z'),
      },
    });
    const imports = await db.pool.query(`SELECT rows FROM enrichment_imports WHERE source = 'vulnrichment'`);
    expect(imports.rows).toEqual([{ rows: 300 }]);
  });

  it('is idempotent, and an older decision never replaces a newer one', async () => {
    const before = await stored();
    await importVulnrichment(db.pool, { file: FOLDER });
    expect(await stored()).toEqual(before);

    const older = path.join(scratch.dir, 'older');
    await cp(FOLDER, older, { recursive: true });
    const file = path.join(older, ONE);
    const text = await readFile(file, 'utf8');
    await writeFile(
      file,
      text
        .replace('"Exploitation": "active"', '"Exploitation": "none"')
        .replace('2024-10-04T13:32:40', '2024-01-01T00:00:00'),
    );
    await importVulnrichment(db.pool, { file: older });
    expect((await findEnrichment(db.pool, ['CVE-2019-0344']))[0]!.cisaSsvc!.exploitation).toBe('active');

    await writeFile(
      file,
      text
        .replace('"Exploitation": "active"', '"Exploitation": "poc"')
        .replace('2024-10-04T13:32:40', '2025-01-01T00:00:00'),
    );
    await importVulnrichment(db.pool, { file: older });
    expect((await findEnrichment(db.pool, ['CVE-2019-0344']))[0]!.cisaSsvc).toMatchObject({
      exploitation: 'public_poc',
      scoredAt: new Date('2025-01-01T00:00:00.662Z'),
    });
  });

  it('rejects a folder with one malformed record and changes nothing', async () => {
    const before = await stored();
    const broken = path.join(scratch.dir, 'broken');
    await cp(FOLDER, broken, { recursive: true });
    await writeFile(path.join(broken, '2024/2xxx/CVE-2024-2359.json'), '{"dataType": "CVE_RECORD", ');
    await expect(importVulnrichment(db.pool, { file: broken })).rejects.toMatchObject({
      code: 'malformed_input',
      message: expect.stringMatching(/vulnrichment import from broken failed: .*CVE-2024-2359\.json/),
    });
    await expect(importVulnrichment(db.pool, { file: scratch.dir + '/nothing-here' })).rejects.toMatchObject({
      message: expect.stringMatching(/vulnrichment import/),
    });
    expect(await stored()).toEqual(before);
  });

  it('streams JSON Lines of records, gzipped, from a URL', async () => {
    await db.pool.query('TRUNCATE cisa_ssvc');
    const server = await startFeedServer({ '/vulnrichment.jsonl.gz': { body: gzipSync(await jsonLines()) } });
    try {
      const result = await importVulnrichment(db.pool, {
        url: `${server.baseUrl}/vulnrichment.jsonl.gz?sig=secret`,
      });
      expect(result).toMatchObject({ origin: `${server.baseUrl}/vulnrichment.jsonl.gz`, rows: 300 });
      expect((await stored()).n).toBe(300);
    } finally {
      await server.close();
    }
    const bad = path.join(scratch.dir, 'bad.jsonl');
    await writeFile(bad, (await jsonLines()).replace(/\n/, '\nnot json\n'));
    await expect(importVulnrichment(db.pool, { file: bad })).rejects.toMatchObject({
      message: expect.stringMatching(/line 2/),
    });
  });
});
