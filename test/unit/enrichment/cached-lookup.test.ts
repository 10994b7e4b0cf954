import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../src/db/pool.js';
import { createCachedEnrichmentLookup } from '../../../src/domain/enrichment/cached-lookup.js';
import { lookupEnrichment } from '../../../src/domain/enrichment/lookup.js';

/** A fake pool that knows a fixed set of CVEs and records the ids of each query. */
function fakeDb(known: string[]): Queryable & { calls: string[][] } {
  const calls: string[][] = [];
  const db = {
    calls,
    query: async (statement: { values: [string[]] }) => {
      const ids = statement.values[0];
      calls.push(ids);
      return {
        rows: ids
          .filter((id) => known.includes(id))
          .map((cve_id) => ({
            cve_id,
            kev: true,
            kev_ransomware: false,
            kev_date_added: '2024-01-01',
            kev_due_date: null,
            epss: 0.5,
            epss_percentile: 0.9,
            cvss_score: null,
            cvss_version: null,
            cvss_vector: null,
          })),
      };
    },
  };
  return db as unknown as Queryable & { calls: string[][] };
}

describe('lookupEnrichment', () => {
  it('sends one query with normalised, de-duplicated ids, and none for an empty list', async () => {
    const db = fakeDb(['CVE-2024-0001']);
    const found = await lookupEnrichment(db, ['cve-2024-0001', 'CVE-2024-0001 ', 'CVE-2024-0002', '  ']);
    expect(db.calls).toEqual([['CVE-2024-0001', 'CVE-2024-0002']]);
    expect([...found.keys()]).toEqual(['CVE-2024-0001']);
    await lookupEnrichment(db, []);
    expect(db.calls).toHaveLength(1);
  });
});

describe('createCachedEnrichmentLookup', () => {
  it('queries only the misses, and caches unknown CVEs too', async () => {
    const db = fakeDb(['CVE-2024-0001']);
    const lookup = createCachedEnrichmentLookup(db, { ttlMs: 1000, now: () => 0 });
    expect([...(await lookup(['CVE-2024-0001', 'CVE-2024-0002'])).keys()]).toEqual(['CVE-2024-0001']);
    const second = await lookup(['cve-2024-0001', 'CVE-2024-0002', 'CVE-2024-0003']);
    expect([...second.keys()]).toEqual(['CVE-2024-0001']);
    expect(second.get('CVE-2024-0001')).toMatchObject({ cveId: 'CVE-2024-0001', kev: true, epss: 0.5 });
    expect(db.calls).toEqual([['CVE-2024-0001', 'CVE-2024-0002'], ['CVE-2024-0003']]);
    await lookup(['CVE-2024-0003', 'CVE-2024-0002']);
    expect(db.calls).toHaveLength(2);
  });

  it('asks again once the TTL has passed', async () => {
    let now = 0;
    const db = fakeDb([]);
    const lookup = createCachedEnrichmentLookup(db, { ttlMs: 1000, now: () => now });
    await lookup(['CVE-2024-0001']);
    now = 999;
    await lookup(['CVE-2024-0001']);
    expect(db.calls).toHaveLength(1);
    now = 1000;
    await lookup(['CVE-2024-0001']);
    expect(db.calls).toHaveLength(2);
  });

  it('evicts the least recently used entry beyond max, and clear() empties it', async () => {
    const db = fakeDb([]);
    const lookup = createCachedEnrichmentLookup(db, { ttlMs: 60_000, max: 2, now: () => 0 });
    await lookup(['CVE-2024-0001', 'CVE-2024-0002']);
    await lookup(['CVE-2024-0001']); // now 0002 is the least recently used
    await lookup(['CVE-2024-0003']);
    expect(lookup.size).toBe(2);
    db.calls.length = 0;
    await lookup(['CVE-2024-0001', 'CVE-2024-0003']);
    expect(db.calls).toEqual([]);
    await lookup(['CVE-2024-0002']);
    expect(db.calls).toEqual([['CVE-2024-0002']]);
    lookup.clear();
    expect(lookup.size).toBe(0);
  });

  it('does not cache a failed query', async () => {
    let fail = true;
    const db = {
      query: async () => {
        if (fail) throw new Error('connection lost');
        return { rows: [] };
      },
    } as unknown as Queryable;
    const lookup = createCachedEnrichmentLookup(db);
    await expect(lookup(['CVE-2024-0001'])).rejects.toThrow('connection lost');
    expect(lookup.size).toBe(0);
    fail = false;
    expect(await lookup(['CVE-2024-0001'])).toEqual(new Map());
    expect(lookup.size).toBe(1);
  });
});
