/**
 * Enrichment store (docs/triage.md#enrichment): importers for CISA KEV, FIRST EPSS and NVD CVSS into
 * PostgreSQL, the daily refresh, and the lookup the triage path uses.
 */
export type { CveEnrichment, EnrichmentLookup } from './types.js';
export {
  lookupEnrichment,
  createEnrichmentLookup,
  createKevCatalogCheck,
  normaliseCveIds,
} from './lookup.js';
export {
  createCachedEnrichmentLookup,
  type CachedEnrichmentLookup,
  type CachedLookupOptions,
} from './cached-lookup.js';
export { importKev, type KevImportResult } from './kev-import.js';
export { importEpss, type EpssImportResult } from './epss-import.js';
export { importNvd, type NvdImportResult } from './nvd-import.js';
export {
  refreshEnrichment,
  type ImportOutcome,
  type ImportResult,
  type RefreshSources,
  type RefreshSummary,
} from './refresh.js';
export {
  describeOrigin,
  sourceFromArgument,
  PUBLIC_FEED_URLS,
  type EnrichmentSource,
  type OpenSourceOptions,
} from './source.js';
export {
  EnrichmentImportError,
  type EnrichmentImportErrorCode,
  type EnrichmentSourceKind,
} from './import-error.js';
