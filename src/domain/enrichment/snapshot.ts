import type { Pool, Queryable } from '../../db/pool.js';
import { importKev, type KevImportResult } from './kev-import.js';
import { PUBLIC_FEED_URLS } from './source.js';

/**
 * Enrichment on day one (issue 12): the product ships a CISA KEV snapshot, loaded at the first
 * start so triage knows known exploitation before anyone runs `enrich`; EPSS (tens of MB a day)
 * is not shipped. The start banner says what is loaded and how to refresh it.
 */
export interface EnrichmentStatus {
  kev: { catalogVersion: string | null; entries: number; importedAt: Date | null } | null;
  epss: { scoreDate: string | null; scores: number } | null;
  cvss: { scores: number } | null;
}

/**
 * Loads the shipped KEV snapshot when `kev_entries` is empty, else leaves the catalog alone (a
 * refreshed catalog is never replaced by the older snapshot). Resolves to the import, or null
 * when nothing was loaded. Two processes starting together may both load it: each import is
 * one transaction under the feed's lock, so the second one only replaces it with the same.
 */
export async function loadKevSnapshotIfEmpty(pool: Pool, file: string): Promise<KevImportResult | null> {
  const { rows } = await pool.query<{ empty: boolean }>(
    'SELECT NOT EXISTS (SELECT 1 FROM kev_entries) AS empty',
  );
  if (!rows[0]?.empty) return null;
  return importKev(pool, { file });
}

/** What the enrichment tables hold now. */
export async function enrichmentStatus(db: Queryable): Promise<EnrichmentStatus> {
  const { rows } = await db.query<{
    kev_entries: number;
    kev_version: string | null;
    kev_imported: Date | null;
    epss_scores: number;
    epss_date: string | null;
    cvss_scores: number;
  }>(`SELECT
        (SELECT count(*)::int FROM kev_entries) AS kev_entries,
        (SELECT max(catalog_version) FROM kev_entries) AS kev_version,
        (SELECT max(finished_at) FROM enrichment_imports WHERE source = 'kev') AS kev_imported,
        (SELECT count(*)::int FROM epss_scores) AS epss_scores,
        (SELECT to_char(max(score_date), 'YYYY-MM-DD') FROM epss_scores) AS epss_date,
        (SELECT count(*)::int FROM cvss_scores) AS cvss_scores`);
  const r = rows[0]!;
  return {
    kev:
      r.kev_entries > 0
        ? { catalogVersion: r.kev_version, entries: r.kev_entries, importedAt: r.kev_imported }
        : null,
    epss: r.epss_scores > 0 ? { scoreDate: r.epss_date, scores: r.epss_scores } : null,
    cvss: r.cvss_scores > 0 ? { scores: r.cvss_scores } : null,
  };
}

/**
 * The banner's lines about enrichment: which snapshot dates are loaded and the command that
 * refreshes each feed (or, for EPSS, loads it at all). `refreshing` names the feeds a daily
 * job refreshes from configured sources.
 */
export function describeEnrichment(
  status: EnrichmentStatus,
  refreshing: { kev: boolean; epss: boolean } = { kev: false, epss: false },
): string[] {
  const n = (x: number) => x.toLocaleString('en-US');
  const kevCommand = `npm run admin -- enrich --kev ${PUBLIC_FEED_URLS.kev}`;
  const epssCommand = `npm run admin -- enrich --epss ${PUBLIC_FEED_URLS.epss}`;
  const lines: string[] = [];
  if (status.kev) {
    const imported = status.kev.importedAt
      ? `, loaded ${status.kev.importedAt.toISOString().slice(0, 10)}`
      : '';
    lines.push(
      `CISA KEV: catalog ${status.kev.catalogVersion ?? '(unknown version)'} (${n(status.kev.entries)} entries${imported}). ` +
        (refreshing.kev ? 'Refreshed daily from ENRICHMENT_KEV_SOURCE; now: ' : 'Refresh: ') +
        kevCommand,
    );
  } else {
    lines.push(`CISA KEV: not loaded. Load it: ${kevCommand}`);
  }
  if (status.epss) {
    lines.push(
      `FIRST EPSS: scores of ${status.epss.scoreDate ?? '(unknown date)'} (${n(status.epss.scores)} CVEs). ` +
        (refreshing.epss ? 'Refreshed daily from ENRICHMENT_EPSS_SOURCE; now: ' : 'Refresh: ') +
        epssCommand,
    );
  } else {
    lines.push(`FIRST EPSS: not loaded (not shipped: the daily file is large). Load it: ${epssCommand}`);
  }
  return lines;
}
