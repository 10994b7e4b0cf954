import type { Config } from '../lib/config.js';
import type { QueueKit } from './queue-kit.js';
import { sourceFromArgument, type RefreshSources } from '../domain/enrichment/index.js';

/** The daily refresh of KEV, EPSS and NVD from the configured sources (DECISIONS §6). */
export const ENRICHMENT_QUEUE = 'enrichment-refresh';

export type EnrichmentRefreshPayload = Record<string, never>;

/** The sources of the configuration, or null when none is configured (then there is no job). */
export function refreshSources(config: Config): RefreshSources | null {
  const { kev, epss, nvd } = config.enrichmentSources;
  if (!kev && !epss && nvd.length === 0) return null;
  return {
    ...(kev ? { kev: sourceFromArgument(kev) } : {}),
    ...(epss ? { epss: sourceFromArgument(epss) } : {}),
    ...(nvd.length > 0 ? { nvd: nvd.map(sourceFromArgument) } : {}),
  };
}

/** Registers the repeating job (idempotent: one scheduler id for every worker process). */
export async function scheduleEnrichmentRefresh(queues: QueueKit, everyMs: number): Promise<void> {
  const queue = queues.queue<EnrichmentRefreshPayload>(ENRICHMENT_QUEUE);
  await queue.upsertJobScheduler('enrichment-daily', { every: everyMs }, { name: 'refresh', data: {} });
}
