import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../../src/db/pool.js';
import {
  enrichmentCounts,
  findEnrichment,
  kevIsEmpty,
  replaceKevEntries,
  writeCvssScores,
} from '../../../src/domain/enrichment/enrichment-store.js';
import type { KevEntry } from '../../../src/domain/enrichment/kev-entry.js';
import { openEnrichmentDb, type EnrichmentDb } from './enrichment-db.js';

let db: EnrichmentDb;

beforeAll(async () => {
  db = await openEnrichmentDb();
});
afterAll(async () => {
  await db?.close();
});

const kev = (cveId: string): KevEntry => ({
  cveId,
  vendorProject: 'Acme',
  product: 'Widget',
  vulnerabilityName: null,
  dateAdded: '2025-01-02',
  dueDate: null,
  knownRansomware: false,
});

describe('the enrichment store', () => {
  it('replaces the KEV catalog and names the CVEs that joined or left it', async () => {
    expect(await kevIsEmpty(db.pool)).toBe(true);
    const first = await withTransaction(db.pool, (tx) =>
      replaceKevEntries(tx, [kev('CVE-2025-0001'), kev('CVE-2025-0002')], 'v1'),
    );
    expect(first.changedCves.sort()).toEqual(['CVE-2025-0001', 'CVE-2025-0002']);
    const second = await withTransaction(db.pool, (tx) =>
      replaceKevEntries(tx, [kev('CVE-2025-0002'), kev('CVE-2025-0003')], 'v2'),
    );
    expect(second.changedCves.sort()).toEqual(['CVE-2025-0001', 'CVE-2025-0003']);
    expect(await kevIsEmpty(db.pool)).toBe(false);
  });

  it('upserts CVSS scores, deletes rejected ones, and reads them back in camelCase', async () => {
    await writeCvssScores(
      db.pool,
      [
        { cveId: 'CVE-2025-0002', score: 9.8, version: '3.1', vector: 'CVSS:3.1/AV:N', source: 'nvd' },
        { cveId: 'CVE-2025-0009', score: 5, version: '3.1', vector: null, source: null },
      ],
      [],
    );
    await writeCvssScores(db.pool, [], ['CVE-2025-0009']);
    const found = await findEnrichment(db.pool, ['CVE-2025-0002', 'CVE-2025-0009']);
    expect(found).toEqual([
      {
        cveId: 'CVE-2025-0002',
        kev: true,
        kevRansomware: false,
        kevDateAdded: '2025-01-02',
        kevDueDate: null,
        epss: null,
        epssPercentile: null,
        epssDate: null,
        cvssScore: 9.8,
        cvssVersion: '3.1',
        cvssVector: 'CVSS:3.1/AV:N',
        cisaSsvc: null,
      },
    ]);
    expect(await enrichmentCounts(db.pool)).toEqual({
      kevEntries: 2,
      kevVersion: 'v2',
      kevImportedAt: null,
      epssScores: 0,
      epssDate: null,
      cvssScores: 1,
      cisaSsvc: 0,
    });
  });
});
