import type { Config } from '../lib/config.js';
import type { Infrastructure } from './infrastructure.js';
import type { Services } from './services.js';
import { makeWebhookDeliverer, type deliverWebhook } from '../domain/triage/webhook.js';
import { runMaintenance, type MaintenanceReport } from '../domain/maintenance.js';
import { SCAN_INGEST_QUEUE } from '../jobs/scan-ingest.js';
import { TRIAGE_QUEUE } from '../jobs/triage-batch.js';
import { startWorkers } from '../workers/main.js';

/**
 * One housekeeping run of this process (`domain/maintenance.ts`), wired here because it spans
 * keys, usage, scans, batches and workflow deliveries. The queues it probes and re-enqueues on are the process's own,
 * opened once by the kit: a run opens no connection.
 */
export function maintenanceRun(
  config: Config,
  infra: Infrastructure,
  services: Services,
  deliver: typeof deliverWebhook = makeWebhookDeliverer(config),
): () => Promise<MaintenanceReport> {
  return () =>
    runMaintenance({
      db: infra.pool,
      quota: services.quota,
      bus: infra.bus,
      clock: services.clock,
      scans: {
        pool: infra.pool,
        storage: services.scans.storage,
        jobs: infra.queues.queue(SCAN_INGEST_QUEUE),
      },
      exports: services.exports,
      deliveries: { requeueLost: () => services.workflows.requeueLost() },
      slaBreaches: { announce: (now) => services.workflows.announceSlaBreaches(now) },
      deletions: services.workspaceDeletions,
      scanFiles: { storage: services.scans.storage },
      acceptances: services.workflows.caseDeliveries,
      storage: {
        storage: services.scans.storage,
        // A live upload writes at least every idle timeout, and none lasts past the body timeout.
        // The margin past it (the body timeout again, at most 5 minutes) covers the flush of the
        // last parts and clock skew with the object store, and keeps a short timeout short.
        partIdleMs: Math.max(2 * config.uploads.idleTimeoutMs, 15 * 60_000),
        partMaxAgeMs: config.uploads.bodyTimeoutMs + Math.min(config.uploads.bodyTimeoutMs, 5 * 60_000),
      },
      batches: {
        db: infra.pool,
        pepper: infra.pepper,
        clock: services.clock,
        deliver,
        jobs: infra.queues.queue(TRIAGE_QUEUE),
      },
    });
}

/** Starts the process's workers over its infrastructure and services. */
export async function startProcessWorkers(
  config: Config,
  infra: Infrastructure,
  services: Services,
): Promise<{ close(): Promise<void> }> {
  const deliver = makeWebhookDeliverer(config);
  return startWorkers({
    config,
    logger: services.logger,
    clock: services.clock,
    pool: infra.pool,
    queues: infra.queues,
    triage: services.triage,
    caseTriage: services.caseTriage,
    exports: services.exports,
    workspaceDeletions: services.workspaceDeletions,
    pepper: infra.pepper,
    storage: services.scans.storage,
    deliver,
    maintenance: maintenanceRun(config, infra, services, deliver),
    workflows: services.workflows,
    processMetrics: services.processMetrics,
  });
}
