import type { Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { markStaleForCves } from '../cases/case-triage-store.js';
import { refreshKevDueDates } from '../cases/sla-policy-store.js';
import { malformed } from './import-error.js';
import { lockFeed, recordImport, replaceKevEntries } from './enrichment-store.js';
import { runImport, type ImportResultBase } from './import-run.js';
import { readJsonFeed } from './json-feed.js';
import { parseKevEntry, type KevEntry } from './kev-entry.js';
import { openSource, type EnrichmentSource, type OpenSourceOptions } from './source.js';

export interface KevImportResult extends ImportResultBase {
  source: 'kev';
  catalogVersion: string;
}

/**
 * Loads the CISA KEV catalog and replaces `kev_entries` with it in one transaction
 * (docs/triage.md#enrichment): readers see the old catalog until the commit, and a failed import leaves
 * it untouched. The catalog is parsed and validated completely before the transaction
 * opens; it is a few thousand entries, so they are kept in memory meanwhile.
 */
export async function importKev(
  pool: Pool,
  source: EnrichmentSource,
  options: OpenSourceOptions = {},
): Promise<KevImportResult> {
  return runImport('kev', source, async (origin) => {
    const started = performance.now();
    const opened = await openSource(source, options);
    let catalogVersion: unknown;
    let declaredCount: unknown;
    // Keyed by CVE: a duplicated entry in the feed keeps its last occurrence instead of failing the refresh.
    const entries = new Map<string, KevEntry>();
    const feed = await readJsonFeed(
      opened,
      { fields: ['catalogVersion', 'count'], itemsKey: 'vulnerabilities' },
      (ev) => {
        if (ev.kind === 'item') {
          const entry = parseKevEntry(ev.value, ev.index);
          entries.set(entry.cveId, entry);
        } else if (ev.key === 'catalogVersion') catalogVersion = ev.value;
        else declaredCount = ev.value;
      },
    );
    if (typeof catalogVersion !== 'string' || catalogVersion.trim() === '') {
      throw malformed('not a KEV catalog: no catalogVersion');
    }
    if (!feed.sawItems) throw malformed('not a KEV catalog: no vulnerabilities array');
    if (declaredCount !== undefined && declaredCount !== feed.items) {
      throw malformed(
        `the catalog declares count ${JSON.stringify(declaredCount)} but lists ${feed.items} entries`,
      );
    }
    // An empty catalog is a broken download, not a reason to forget every KEV listing.
    if (entries.size === 0) throw malformed('the catalog lists no vulnerabilities');
    const version = catalogVersion.trim();
    await withTransaction(pool, async (client) => {
      await lockFeed(client, 'kev');
      const { changedCves } = await replaceKevEntries(client, [...entries.values()], version);
      // Cases triaged before a CVE joined or left the catalog are stale (docs/cases.md#stale-triage).
      await markStaleForCves(client, changedCves);
      // A KEV due date may now be the sooner one (docs/cases.md#due-dates-and-sla).
      await refreshKevDueDates(client, changedCves);
      await recordImport(client, 'kev', origin, entries.size);
    });
    return {
      source: 'kev',
      origin,
      rows: entries.size,
      catalogVersion: version,
      durationMs: Math.round(performance.now() - started),
    };
  });
}
