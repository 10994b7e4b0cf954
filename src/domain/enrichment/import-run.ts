import { toImportError, type EnrichmentSourceKind } from './import-error.js';
import { describeOrigin, type EnrichmentSource } from './source.js';

/** What every importer reports. */
export interface ImportResultBase {
  source: EnrichmentSourceKind;
  /** As stored in `enrichment_imports.origin`: a URL without credentials or query, or a file name. */
  origin: string;
  /** Rows the import wrote (KEV entries, EPSS scores, CVEs with a CVSS score). */
  rows: number;
  durationMs: number;
}

/**
 * Runs one import and gives every failure the same shape (an `EnrichmentImportError` whose
 * message names the feed and origin). The importer itself owns its transaction, so when this
 * rejects, nothing of that import was committed.
 */
export async function runImport<T>(
  kind: EnrichmentSourceKind,
  source: EnrichmentSource,
  work: (origin: string) => Promise<T>,
): Promise<T> {
  const origin = describeOrigin(source);
  try {
    return await work(origin);
  } catch (err) {
    throw toImportError(kind, origin, err);
  }
}
