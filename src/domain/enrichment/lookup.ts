import type { Queryable } from '../../db/pool.js';
import type { CveEnrichment, EnrichmentLookup } from './types.js';

interface EnrichmentRow {
  cve_id: string;
  kev: boolean;
  kev_ransomware: boolean;
  kev_date_added: string | null;
  kev_due_date: string | null;
  epss: number | null;
  epss_percentile: number | null;
  cvss_score: number | null;
  cvss_version: string | null;
  cvss_vector: string | null;
}

// Dates as text and the numeric score as float8, so node-postgres returns strings and numbers
// rather than local-time Date objects and numeric strings.
const LOOKUP_SQL = `
  SELECT ids.cve_id,
         k.cve_id IS NOT NULL AS kev,
         coalesce(k.known_ransomware, false) AS kev_ransomware,
         to_char(k.date_added, 'YYYY-MM-DD') AS kev_date_added,
         to_char(k.due_date, 'YYYY-MM-DD') AS kev_due_date,
         e.epss, e.percentile AS epss_percentile,
         c.base_score::float8 AS cvss_score, c.version AS cvss_version, c.vector AS cvss_vector
    FROM unnest($1::text[]) AS ids(cve_id)
    LEFT JOIN kev_entries k ON k.cve_id = ids.cve_id
    LEFT JOIN epss_scores e ON e.cve_id = ids.cve_id
    LEFT JOIN cvss_scores c ON c.cve_id = ids.cve_id
   WHERE k.cve_id IS NOT NULL OR e.cve_id IS NOT NULL OR c.cve_id IS NOT NULL`;

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
 * Enrichment for many CVEs in one query over the three tables (DECISIONS §6). Keys of the
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
  const { rows } = await db.query<EnrichmentRow>(LOOKUP_SQL, [ids]);
  for (const r of rows) {
    result.set(r.cve_id, {
      cveId: r.cve_id,
      kev: r.kev,
      kevRansomware: r.kev_ransomware,
      kevDateAdded: r.kev_date_added,
      kevDueDate: r.kev_due_date,
      epss: r.epss,
      epssPercentile: r.epss_percentile,
      cvssScore: r.cvss_score,
      cvssVersion: r.cvss_version,
      cvssVector: r.cvss_vector,
    });
  }
  return result;
}

/** `lookupEnrichment` bound to a pool, as the `EnrichmentLookup` the triage path takes. */
export function createEnrichmentLookup(db: Queryable): EnrichmentLookup {
  return (cveIds) => lookupEnrichment(db, cveIds);
}
