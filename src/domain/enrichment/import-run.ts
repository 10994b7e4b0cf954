import type { Queryable } from '../../db/pool.js';
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

const LOCK_NAMESPACE = 727_002;
const LOCK_IDS: Record<EnrichmentSourceKind, number> = { kev: 1, epss: 2, nvd: 3 };

/**
 * Serialises imports of one feed across processes (the daily job, an admin running the CLI):
 * two overlapping full replaces would each delete only the rows they can see and then collide
 * on the other's inserts. Held until the transaction ends.
 */
export async function lockFeed(db: Queryable, kind: EnrichmentSourceKind): Promise<void> {
  await db.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_NAMESPACE, LOCK_IDS[kind]]);
}

/** Logs a finished import in `enrichment_imports`; call it inside the import's transaction. */
export async function recordImport(
  db: Queryable,
  kind: EnrichmentSourceKind,
  origin: string,
  rows: number,
): Promise<void> {
  await db.query('INSERT INTO enrichment_imports (source, origin, rows) VALUES ($1, $2, $3)', [
    kind,
    origin,
    rows,
  ]);
}

/** Splits `items` into arrays of at most `size`, for multi-row statements with bounded parameters. */
export function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
