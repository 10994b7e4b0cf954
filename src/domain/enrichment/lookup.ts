import type { Queryable } from '../../db/pool.js';
import type { Db } from '../../db/pool.js';
import { findEnrichment, kevIsEmpty } from './enrichment-store.js';
import type { CveEnrichment, EnrichmentLookup } from './types.js';

/** Trims, upper-cases and de-duplicates CVE ids, dropping empty ones. */
export function normaliseCveIds(cveIds: readonly string[]): string[] {
  const ids = new Set<string>();
  for (const id of cveIds) {
    const norm = id.trim().toUpperCase();
    if (norm) ids.add(norm);
  }
  return [...ids];
}

/**
 * Enrichment for many CVEs in one query over the three tables (docs/triage.md#enrichment). Keys of the
 * result are upper-case CVE ids; a CVE none of the feeds knows is absent, never a record of
 * nulls. Implements `EnrichmentLookup` once bound to a pool: `(ids) => lookupEnrichment(pool, ids)`.
 */
export async function lookupEnrichment(
  db: Queryable,
  cveIds: readonly string[],
): Promise<Map<string, CveEnrichment>> {
  const ids = normaliseCveIds(cveIds);
  const result = new Map<string, CveEnrichment>();
  if (ids.length === 0) return result;
  for (const e of await findEnrichment(db, ids)) result.set(e.cveId, e);
  return result;
}

/** `lookupEnrichment` bound to a pool, as the `EnrichmentLookup` the triage path takes. */
export function createEnrichmentLookup(db: Queryable): EnrichmentLookup {
  return (cveIds) => lookupEnrichment(db, cveIds);
}

/**
 * Whether a CISA KEV catalog is loaded, bound to a pool: with one, a CVE absent from it is "not
 * listed"; without one, its KEV status is unknown (an empty table proves nothing).
 */
export function createKevCatalogCheck(db: Db): () => Promise<boolean> {
  return async () => !(await kevIsEmpty(db));
}
