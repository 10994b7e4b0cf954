import type { Pool } from '../../db/pool.js';
import { importEpss, type EpssImportResult } from './epss-import.js';
import { EnrichmentImportError, toImportError, type EnrichmentSourceKind } from './import-error.js';
import { importKev, type KevImportResult } from './kev-import.js';
import { importNvd, type NvdImportResult } from './nvd-import.js';
import { describeOrigin, type EnrichmentSource, type OpenSourceOptions } from './source.js';
import { importVulnrichment, type VulnrichmentImportResult } from './vulnrichment-import.js';

export type ImportResult = KevImportResult | EpssImportResult | NvdImportResult | VulnrichmentImportResult;

/** One source's outcome: its result, or the error that left its previous data in place. */
export type ImportOutcome =
  | ({ ok: true } & ImportResult)
  | { ok: false; source: EnrichmentSourceKind; origin: string; error: EnrichmentImportError };

export interface RefreshSources {
  kev?: EnrichmentSource;
  epss?: EnrichmentSource;
  /** Applied in order, so a later file's scores win (e.g. a full dump, then `modified`). */
  nvd?: EnrichmentSource[];
  /** CISA Vulnrichment: folders of CVE JSON 5 records or JSON Lines files/URLs, applied in order. */
  vulnrichment?: EnrichmentSource[];
}

export interface RefreshSummary {
  /** In the order KEV, EPSS, each NVD source, then each Vulnrichment source. */
  outcomes: ImportOutcome[];
  /** How many outcomes failed; the caller decides whether that fails the job. */
  failed: number;
  durationMs: number;
}

/**
 * The daily enrichment refresh (docs/triage.md#enrichment), for the scheduled job and the admin CLI.
 * Each source is imported on its own, one after the other: a broken EPSS download must not
 * keep a fresh KEV catalog out, and each failure leaves that source's previous data intact.
 * Never rejects for an import failure; read `failed` (a job should then throw so it retries).
 */
export async function refreshEnrichment(
  pool: Pool,
  sources: RefreshSources,
  options: OpenSourceOptions = {},
): Promise<RefreshSummary> {
  const started = performance.now();
  const tasks: Array<{
    kind: EnrichmentSourceKind;
    source: EnrichmentSource;
    run: () => Promise<ImportResult>;
  }> = [];
  if (sources.kev) {
    const s = sources.kev;
    tasks.push({ kind: 'kev', source: s, run: () => importKev(pool, s, options) });
  }
  if (sources.epss) {
    const s = sources.epss;
    tasks.push({ kind: 'epss', source: s, run: () => importEpss(pool, s, options) });
  }
  for (const s of sources.nvd ?? [])
    tasks.push({ kind: 'nvd', source: s, run: () => importNvd(pool, s, options) });
  for (const s of sources.vulnrichment ?? [])
    tasks.push({ kind: 'vulnrichment', source: s, run: () => importVulnrichment(pool, s, options) });

  const outcomes: ImportOutcome[] = [];
  for (const task of tasks) {
    try {
      outcomes.push({ ok: true, ...(await task.run()) });
    } catch (err) {
      const origin = describeOrigin(task.source);
      const error = err instanceof EnrichmentImportError ? err : toImportError(task.kind, origin, err);
      outcomes.push({ ok: false, source: task.kind, origin, error });
    }
  }
  return {
    outcomes,
    failed: outcomes.filter((o) => !o.ok).length,
    durationMs: Math.round(performance.now() - started),
  };
}
