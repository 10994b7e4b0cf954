import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import type { Pool } from '../db/pool.js';
import type { TriageService } from '../domain/triage/triage-service.js';
import type { CaseTriageService } from '../domain/triage/case-triage.js';
import type { deliverWebhook } from '../domain/triage/webhook.js';
import type { ScanStorage } from '../domain/scans/scan-storage.js';
import { startTriageWorker } from './triage-worker.js';
import { startScanIngestWorker } from './scan-ingest-worker.js';
import {
  ENRICHMENT_QUEUE,
  enrichmentRefreshProcessor,
  refreshSources,
  scheduleEnrichmentRefresh,
  type EnrichmentRefreshPayload,
} from '../jobs/enrichment-refresh.js';
import {
  keepMaintenanceScheduled,
  MAINTENANCE_QUEUE,
  maintenanceProcessor,
  scheduleMaintenance,
  type MaintenancePayload,
} from '../jobs/maintenance-job.js';
import type { QueueKit, WorkerHandle } from '../jobs/queue-kit.js';
import type { ExportService } from '../domain/exports/export-service.js';
import { EXPORT_QUEUE, exportProcessor, type ExportPayload } from '../jobs/export-job.js';
import {
  WORKSPACE_DELETION_QUEUE,
  workspaceDeletionProcessor,
  type WorkspaceDeletionPayload,
} from '../jobs/workspace-deletion.js';
import type { RemovalOutcome, WorkspaceDeletions } from '../domain/workspaces/workspace-deletion.js';
import { timedQueueKit, type JobObserver } from '../jobs/timed-queue-kit.js';
import type { ScanIngestObserver } from '../domain/scans/ingest-scan.js';
import { startMetricsServer } from './metrics-server.js';
import { startDeliveryWorker } from './delivery-worker.js';
import type { DeliveryDeps } from '../domain/workflows/deliver.js';
import type { WorkflowTrigger } from '../domain/workflows/trigger.js';

/** What the workers of a process run on, handed over by `app/` (the composition root). */
export interface WorkerDeps {
  config: Config;
  logger: Logger;
  clock: () => Date;
  pool: Pool;
  /** The process's queue kit: workers and the queues producers use come from it. */
  queues: QueueKit;
  triage: TriageService;
  /** Triages a completed scan's cases when its upload asked for it. */
  caseTriage: Pick<CaseTriageService, 'triageScan'>;
  exports: ExportService;
  /** Removes the data of deleted workspaces (docs/operations.md#end-of-life). */
  workspaceDeletions: Pick<WorkspaceDeletions, 'remove'>;
  pepper: string;
  storage: ScanStorage;
  deliver: typeof deliverWebhook;
  /** Mapped workflows: the delivery worker's settings, and the trigger scans call on completion. */
  workflows?: { delivery: DeliveryDeps; trigger: WorkflowTrigger };
  /** One housekeeping run (`domain/maintenance.ts`, wired by `app/`). */
  maintenance: () => Promise<unknown>;
  /** This process's metrics: job durations, scan outcomes, and what METRICS_PORT serves. */
  processMetrics?: {
    jobs: JobObserver;
    scans: ScanIngestObserver;
    http: { scrape(): Promise<{ contentType: string; body: string }> };
  };
}

/**
 * Starts the workers of the `worker` role: housekeeping, the enrichment refresh (when sources
 * are configured), batch triage and scan ingestion. `close()` waits for running jobs.
 */
export async function startWorkers(deps: WorkerDeps): Promise<{ close(): Promise<void> }> {
  const { config, logger } = deps;
  const metrics = deps.processMetrics;
  // Workers of a measured process time their jobs; producers' queues are the kit's own either way.
  const queues = metrics ? timedQueueKit(deps.queues, metrics.jobs) : deps.queues;
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
  await scheduleMaintenance(queues);
  const stopScheduling = keepMaintenanceScheduled(queues, {
    onError: (err) => logger.warn({ err: err.message }, 'maintenance scheduler not re-asserted'),
  });
  const maintenance = queues.worker<MaintenancePayload, unknown>(
    MAINTENANCE_QUEUE,
    maintenanceProcessor(deps.maintenance),
    { concurrency: 1 },
  );
  maintenance.on('failed', (_job, err) =>
    logger.warn({ err: (err as Error)?.message }, 'maintenance job failed'),
  );
  workers.push(maintenance);
  const sources = refreshSources(config);
  if (sources) {
    await scheduleEnrichmentRefresh(queues, config.enrichmentRefreshEveryMs);
    workers.push(
      queues.worker<EnrichmentRefreshPayload, number>(
        ENRICHMENT_QUEUE,
        enrichmentRefreshProcessor({ pool: deps.pool, sources, logger }),
        { concurrency: 1 },
      ),
    );
  }
  workers.push(
    startTriageWorker(
      queues,
      {
        db: deps.pool,
        triage: deps.triage,
        pepper: deps.pepper,
        clock: deps.clock,
        deliver: deps.deliver,
        batchDeadlineMs: config.batchDeadlineMs,
      },
      { concurrency: config.workerConcurrency, logger },
    ),
  );
  // Exports stream from the database at disk speed: two at once keep a core busy, not the pool.
  workers.push(
    queues.worker<ExportPayload, void>(EXPORT_QUEUE, exportProcessor(deps.exports), { concurrency: 2 }),
  );
  // One removal at a time per worker: each walks a whole workspace, slice by slice.
  const deletions = queues.worker<WorkspaceDeletionPayload, RemovalOutcome>(
    WORKSPACE_DELETION_QUEUE,
    workspaceDeletionProcessor(deps.workspaceDeletions),
    { concurrency: 1 },
  );
  deletions.on('failed', (_job, err) =>
    logger.warn({ err: (err as Error)?.message }, 'workspace removal failed; it is retried'),
  );
  workers.push(deletions);
  const scans = startScanIngestWorker({
    queues,
    pool: deps.pool,
    logger,
    config,
    storage: deps.storage,
    triageScan: (scanId) => deps.caseTriage.triageScan(scanId),
    ...(metrics ? { observer: metrics.scans } : {}),
    ...(deps.workflows ? { afterScan: deps.workflows.trigger.scanCompleted } : {}),
  });
  if (deps.workflows) workers.push(startDeliveryWorker(queues, deps.workflows.delivery, { logger }));
  return {
    async close() {
      stopScheduling();
      await Promise.allSettled([...workers.map((w) => w.close()), scans.close()]);
      await metricsServer?.close();
    },
  };
}
