import path from 'node:path';
import { projectRoot, type Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import type { Pool } from '../db/pool.js';
import { describeError } from '../lib/error-text.js';
import {
  describeEnrichment,
  enrichmentStatus,
  loadKevSnapshotIfEmpty,
} from '../domain/enrichment/snapshot.js';

/** The CISA KEV snapshot shipped with the product (`data/kev/README.md` says which and whence). */
export const SHIPPED_KEV_SNAPSHOT = path.join(
  projectRoot,
  'data',
  'kev',
  'known_exploited_vulnerabilities.json.gz',
);

/**
 * At start: loads the shipped KEV snapshot into an empty database (the first start), then
 * answers the start banner's enrichment lines. A snapshot that cannot be loaded is logged and
 * does not stop the service: triage works without KEV, only less well.
 */
export async function prepareDayOneEnrichment(
  config: Config,
  pool: Pool,
  log: Logger,
  snapshot: string = SHIPPED_KEV_SNAPSHOT,
): Promise<string[]> {
  try {
    const loaded = await loadKevSnapshotIfEmpty(pool, snapshot);
    if (loaded)
      log.info(
        { rows: loaded.rows, catalogVersion: loaded.catalogVersion, origin: loaded.origin },
        'loaded the shipped CISA KEV snapshot',
      );
  } catch (err) {
    log.warn({ err: describeError(err) }, 'could not load the shipped CISA KEV snapshot');
  }
  const status = await enrichmentStatus(pool);
  return describeEnrichment(status, {
    kev: config.enrichmentSources.kev !== null,
    epss: config.enrichmentSources.epss !== null,
    vulnrichment: config.enrichmentSources.vulnrichment.length > 0,
  });
}
