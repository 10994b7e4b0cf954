import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import type { Infrastructure } from '../app/infrastructure.js';
import type { QuotaService } from '../domain/usage/quota.js';
import type { TriageService } from '../domain/triage/triage-service.js';
import { makeWebhookDeliverer } from '../domain/triage/webhook.js';
import { startTriageWorker } from './triage-worker.js';
import { startScanIngestWorker } from './scan-ingest-worker.js';
import { createLocalScanStorage } from '../domain/scans/scan-storage.js';
import {
  ENRICHMENT_QUEUE,
  refreshSources,
  scheduleEnrichmentRefresh,
  type EnrichmentRefreshPayload,
} from '../jobs/enrichment-refresh.js';
import { refreshEnrichment } from '../domain/enrichment/index.js';
import { runMaintenance } from '../domain/maintenance.js';
import {
  keepMaintenanceScheduled,
  MAINTENANCE_QUEUE,
  scheduleMaintenance,
  type MaintenancePayload,
} from '../jobs/maintenance-job.js';
import type { WorkerHandle } from '../jobs/queue-kit.js';
import { SCAN_INGEST_QUEUE } from '../jobs/scan-ingest.js';
import type { ExportService } from '../domain/exports/export-service.js';
import { EXPORT_QUEUE, exportProcessor, type ExportPayload } from '../jobs/export-job.js';
import { TRIAGE_QUEUE } from '../jobs/triage-batch.js';
import { timedQueueKit, type JobObserver } from '../jobs/timed-queue-kit.js';
import type { ScanIngestObserver } from './scan-ingest-worker.js';
import { startMetricsServer } from './metrics-server.js';

/**
 * The `worker` process role: BullMQ workers over the domain. Later features (scan
 * ingestion, batch triage) add their workers here. `close()` waits for running jobs.
 */
export async function startWorkers(
  config: Config,
  infra: Infrastructure,
  deps: {
    quota: QuotaService;
    triage: TriageService;
    exports: ExportService;
    pepper: string;
    clock: () => Date;
    logger: Logger;
    /** This process's metrics: job durations, scan outcomes, and what METRICS_PORT serves. */
    processMetrics?: {
      jobs: JobObserver;
      scans: ScanIngestObserver;
      http: { scrape(): Promise<{ contentType: string; body: string }> };
    };
  },
): Promise<{ close(): Promise<void> }> {
  const metrics = deps.processMetrics;
  if (metrics) infra = { ...infra, queues: timedQueueKit(infra.queues, metrics.jobs) };
  const metricsServer =
    metrics && config.metricsPort !== null
      ? await startMetricsServer({
          port: config.metricsPort,
          host: config.host,
          token: config.metricsToken,
          scrape: () => metrics.http.scrape(),
        })
      : null;
  const workers: WorkerHandle[] = [];
  await scheduleMaintenance(infra.queues);
  const stopScheduling = keepMaintenanceScheduled(infra.queues, {
    onError: (err) => deps.logger.warn({ err: err.message }, 'maintenance scheduler not re-asserted'),
  });
  const storage = createLocalScanStorage(config.scanStorageDir);
  const webhooks = makeWebhookDeliverer(config);
  const maintenance = infra.queues.worker<MaintenancePayload, unknown>(
    MAINTENANCE_QUEUE,
    async () =>
      runMaintenance({
        db: infra.pool,
        quota: deps.quota,
        bus: infra.bus,
        clock: deps.clock,
        scans: { pool: infra.pool, storage, jobs: infra.queues.queue(SCAN_INGEST_QUEUE) },
        exports: deps.exports,
        batches: {
          db: infra.pool,
          pepper: deps.pepper,
          clock: deps.clock,
          deliver: webhooks,
          jobs: infra.queues.queue(TRIAGE_QUEUE),
        },
      }),
    { concurrency: 1 },
  );
  maintenance.on('failed', (_job, err) =>
    deps.logger.warn({ err: (err as Error)?.message }, 'maintenance job failed'),
  );
  workers.push(maintenance);
  const sources = refreshSources(config);
  if (sources) {
    await scheduleEnrichmentRefresh(infra.queues, config.enrichmentRefreshEveryMs);
    const refresher = infra.queues.worker<EnrichmentRefreshPayload, unknown>(
      ENRICHMENT_QUEUE,
      async () => {
        const summary = await refreshEnrichment(infra.pool, sources);
        for (const o of summary.outcomes) {
          if (o.ok)
            deps.logger.info({ source: o.source, origin: o.origin, rows: o.rows }, 'enrichment refreshed');
          else
            deps.logger.warn(
              { source: o.source, origin: o.origin, err: o.error.message },
              'enrichment refresh failed',
            );
        }
        // A failed source kept its previous data; failing the job lets BullMQ retry it.
        if (summary.failed > 0) throw new Error(`${summary.failed} enrichment source(s) failed`);
        return summary.outcomes.length;
      },
      { concurrency: 1 },
    );
    workers.push(refresher);
  }
  workers.push(
    startTriageWorker(
      infra.queues,
      {
        db: infra.pool,
        triage: deps.triage,
        pepper: deps.pepper,
        clock: deps.clock,
        deliver: webhooks,
      },
      { concurrency: config.workerConcurrency, logger: deps.logger },
    ),
  );
  // Exports stream from the database at disk speed: two at once keep a core busy, not the pool.
  workers.push(
    infra.queues.worker<ExportPayload, void>(EXPORT_QUEUE, exportProcessor(deps.exports), { concurrency: 2 }),
  );
  const scans = startScanIngestWorker({
    queues: infra.queues,
    pool: infra.pool,
    logger: deps.logger,
    config,
    storage,
    ...(metrics ? { observer: metrics.scans } : {}),
  });
  return {
    async close() {
      stopScheduling();
      await Promise.allSettled([...workers.map((w) => w.close()), scans.close()]);
      await metricsServer?.close();
    },
  };
}
