import type { Config } from '../lib/config.js';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../lib/logger.js';
import type { JobQueues } from './queue-kit.js';
import { refreshEnrichment, sourceFromArgument, type RefreshSources } from '../domain/enrichment/index.js';

/** The daily refresh of KEV, EPSS and NVD from the configured sources. */
export const ENRICHMENT_QUEUE = 'enrichment-refresh';

export type EnrichmentRefreshPayload = Record<string, never>;

/** The sources of the configuration, or null when none is configured (then there is no job). */
export function refreshSources(config: Config): RefreshSources | null {
  const { kev, epss, nvd, vulnrichment } = config.enrichmentSources;
  if (!kev && !epss && nvd.length === 0 && vulnrichment.length === 0) return null;
  return {
    ...(kev ? { kev: sourceFromArgument(kev) } : {}),
    ...(epss ? { epss: sourceFromArgument(epss) } : {}),
    ...(nvd.length > 0 ? { nvd: nvd.map(sourceFromArgument) } : {}),
    ...(vulnrichment.length > 0 ? { vulnrichment: vulnrichment.map(sourceFromArgument) } : {}),
  };
}

/** Registers the repeating job (idempotent: one scheduler id for every worker process). */
export async function scheduleEnrichmentRefresh(queues: JobQueues, everyMs: number): Promise<void> {
  const queue = queues.queue<EnrichmentRefreshPayload>(ENRICHMENT_QUEUE);
  await queue.upsertJobScheduler('enrichment-daily', { every: everyMs }, { name: 'refresh', data: {} });
}

/**
 * The processor: refreshes every source and logs how each went. A failed source kept its
 * previous data; failing the job lets BullMQ retry it. Answers the number of sources tried.
 */
export function enrichmentRefreshProcessor(deps: { pool: Pool; sources: RefreshSources; logger: Logger }) {
  return async (): Promise<number> => {
    const summary = await refreshEnrichment(deps.pool, deps.sources);
    for (const o of summary.outcomes) {
      if (o.ok)
        deps.logger.info({ source: o.source, origin: o.origin, rows: o.rows }, 'enrichment refreshed');
      else
        deps.logger.warn(
          { source: o.source, origin: o.origin, err: o.error.message },
          'enrichment refresh failed',
        );
    }
    if (summary.failed > 0) throw new Error(`${summary.failed} enrichment source(s) failed`);
    return summary.outcomes.length;
  };
}
