import type { Db, Pool } from '../../db/pool.js';
import { enrichmentCounts, kevIsEmpty } from './enrichment-store.js';
import { importKev, type KevImportResult } from './kev-import.js';
import { PUBLIC_FEED_URLS } from './source.js';

/**
 * Enrichment on day one (docs/triage.md#enrichment): the product ships a CISA KEV snapshot, loaded at the first
 * start so triage knows known exploitation before anyone runs `enrich`; EPSS (tens of MB a day)
 * is not shipped. The start banner says what is loaded and how to refresh it.
 */
export interface EnrichmentStatus {
  kev: { catalogVersion: string | null; entries: number; importedAt: Date | null } | null;
  epss: { scoreDate: string | null; scores: number } | null;
  cvss: { scores: number } | null;
  /** CVEs CISA's Vulnrichment records gave SSVC decision points for. */
  cisaSsvc: { decisions: number } | null;
}

/**
 * Loads the shipped KEV snapshot when `kev_entries` is empty, else leaves the catalog alone (a
 * refreshed catalog is never replaced by the older snapshot). Resolves to the import, or null
 * when nothing was loaded. Two processes starting together may both load it: each import is
 * one transaction under the feed's lock, so the second one only replaces it with the same.
 */
export async function loadKevSnapshotIfEmpty(pool: Pool, file: string): Promise<KevImportResult | null> {
  if (!(await kevIsEmpty(pool))) return null;
  return importKev(pool, { file });
}

/** What the enrichment tables hold now. */
export async function enrichmentStatus(db: Db): Promise<EnrichmentStatus> {
  const c = await enrichmentCounts(db);
  return {
    kev:
      c.kevEntries > 0
        ? { catalogVersion: c.kevVersion, entries: c.kevEntries, importedAt: c.kevImportedAt }
        : null,
    epss: c.epssScores > 0 ? { scoreDate: c.epssDate, scores: c.epssScores } : null,
    cvss: c.cvssScores > 0 ? { scores: c.cvssScores } : null,
    cisaSsvc: c.cisaSsvc > 0 ? { decisions: c.cisaSsvc } : null,
  };
}

/**
 * The banner's lines about enrichment: which snapshot dates are loaded and the command that
 * refreshes each feed (or, for EPSS, loads it at all). `refreshing` names the feeds a daily
 * job refreshes from configured sources.
 */
export function describeEnrichment(
  status: EnrichmentStatus,
  refreshing: { kev: boolean; epss: boolean; vulnrichment?: boolean } = { kev: false, epss: false },
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
  // CISA's own SSVC decisions: named when loaded or configured (an optional source, not shipped).
  const vulnrichmentCommand = 'npm run admin -- enrich --vulnrichment DIR|URL';
  const fromSources = 'Refreshed daily from ENRICHMENT_VULNRICHMENT_SOURCES';
  if (status.cisaSsvc) {
    lines.push(
      `CISA Vulnrichment: SSVC decisions for ${n(status.cisaSsvc.decisions)} CVEs. ` +
        (refreshing.vulnrichment ? `${fromSources}; now: ` : 'Refresh: ') +
        vulnrichmentCommand,
    );
  } else if (refreshing.vulnrichment) {
    lines.push(`CISA Vulnrichment: not loaded yet. ${fromSources}; now: ${vulnrichmentCommand}`);
  }
  return lines;
}
