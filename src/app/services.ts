import type { Config } from '../lib/config.js';
import { READINESS_DEADLINE_MS, withDeadline } from '../lib/deadline.js';
import type { Logger } from '../lib/logger.js';
import type { Infrastructure } from './infrastructure.js';
import type { AppDeps } from '../api/app-deps.js';
import type { InvalidationBus } from '../domain/keys/invalidation-bus.js';
import { createKeyVerifier } from '../domain/keys/key-verifier.js';
import { createKeyService } from '../domain/keys/key-service.js';
import { readKeyVersion } from '../domain/keys/keys-store.js';
import { createAuthFailureLimiter } from '../domain/keys/auth-failure-limiter.js';
import { createWorkspaceService } from '../domain/workspaces/workspace-service.js';
import { createSessionStore } from '../domain/workspaces/sessions.js';
import { createSsoService } from '../domain/workspaces/sso/sso-service.js';
import { createRequestMeter } from '../domain/usage/request-meter.js';
import {
  createPgWindowCounter,
  createRateLimiter,
  createRedisWindowCounter,
} from '../domain/usage/rate-limiter.js';
import { createQuotaService } from '../domain/usage/quota.js';
import { buildTriage } from './build-triage.js';
import { createCaseTriageService } from '../domain/triage/case-triage.js';
import { openScanStorage } from './object-storage.js';
import { createScanService } from '../domain/scans/scan-service.js';
import { createCaseService } from '../domain/cases/case-service.js';
import { createSlaPolicyService } from '../domain/cases/sla-policy-service.js';
import { scanTriageView } from '../domain/triage/case-batch-store.js';
import { createCaseSelectionService } from '../domain/cases/case-selection.js';
import { createUsageReports } from '../domain/usage/usage-report.js';
import { createAuditLog } from '../domain/keys/audit-log.js';
import { createEnrichmentLookup, createKevCatalogCheck } from '../domain/enrichment/index.js';
import { createWorkspaceSummaries } from '../domain/workspaces/workspace-summary.js';
import { createUploadGate } from '../domain/scans/upload-gate.js';
import { enqueueScanIngest, SCAN_INGEST_QUEUE, type ScanIngestPayload } from '../jobs/scan-ingest.js';
import { enqueueBatchItems } from '../jobs/triage-batch.js';
import { createExportService } from '../domain/exports/export-service.js';
import { enqueueExport } from '../jobs/export-job.js';
import { createProcessMetrics, type ProcessMetrics } from './metrics/process-metrics.js';
import { buildWorkflows, type Workflows } from './build-workflows.js';
import { createWorkspaceDeletions } from '../domain/workspaces/workspace-deletion.js';
import { createRetentionSettings } from '../domain/workspaces/retention.js';
import { buildWorkspaceArchive } from '../domain/workspaces/workspace-archive.js';
import { enqueueWorkspaceDeletion } from '../jobs/workspace-deletion.js';
import { createMailer } from '../lib/mailer.js';
import { createMemberService } from '../domain/workspaces/members.js';
import { createInvitationService } from '../domain/workspaces/invitations.js';
import { createPasswordResetService } from '../domain/workspaces/password-reset.js';

/**
 * The services of a process: everything the HTTP edge needs (`AppDeps`, of which each route
 * group receives a `Pick`), plus what only the workers use. Built once per process from its
 * infrastructure; `stop()` ends what they hold (the request meter's buffer, leased AI calls,
 * provider clients), before the infrastructure closes.
 */
export interface Services extends AppDeps {
  /** Key invalidations across processes (the maintenance sweep publishes on it). */
  bus: InvalidationBus;
  /** This process's metrics: job durations, scan outcomes, and what METRICS_PORT serves. */
  processMetrics: ProcessMetrics;
  /** Mapped workflows: the service, the inbound hooks, the trigger and the delivery settings. */
  workflows: Workflows;
  stop(): Promise<void>;
}

/**
 * Wires the domain services from the infrastructure. No container: plain factories taking their
 * dependencies, so a test builds the same graph with a fake clock.
 */
export async function buildServices(
  config: Config,
  infra: Infrastructure,
  logger: Logger,
  clock: () => Date = () => new Date(),
): Promise<Services> {
  const metrics = createProcessMetrics({ queues: infra.queues, catalog: config.models });
  const verifier = createKeyVerifier({
    db: infra.pool,
    pepper: infra.pepper,
    ttlMs: config.keyCacheTtlMs,
    clock,
    isLive: () => infra.bus.isLive(),
    readVersion: () => readKeyVersion(infra.pool),
    failures: createAuthFailureLimiter({
      limit: config.authFailuresPerMinute,
      now: () => clock().getTime(),
    }),
    onCacheLookup: metrics.keyCache.lookup,
  });
  infra.bus.subscribe((m) => {
    metrics.keyCache.invalidated(m.kind);
    verifier.invalidate(m);
  });
  const keys = createKeyService({ db: infra.pool, pepper: infra.pepper, bus: infra.bus, clock });
  const meter = createRequestMeter(infra.pool);
  const quota = createQuotaService(infra.pool, clock, { reserveDb: infra.relaxedPool });
  const workflows = buildWorkflows(config, infra, clock, logger);
  const triage = await buildTriage({
    config,
    pool: infra.pool,
    redis: infra.redis,
    quota,
    clock,
    logger,
    pepper: infra.pepper,
    observer: metrics.triage,
    caseDeliveries: workflows.caseDeliveries,
    enqueueBatchItems: (batchId, total) =>
      enqueueBatchItems(infra.queues, batchId, total, config.batchItemRetry),
  });
  const opened = await openScanStorage(config, logger);
  const scanStorage = opened.storage;
  // One gate for every upload route: the API's and the console's uploads share the places.
  const uploadGate = createUploadGate(config.uploads);
  const caseTriage = createCaseTriageService({
    db: infra.pool,
    quota,
    triage: triage.triage,
    plans: config.plans,
    clock,
    enqueueBatchItems: (batchId, total) =>
      enqueueBatchItems(infra.queues, batchId, total, config.batchItemRetry),
  });
  const workspaces = createWorkspaceService({
    db: infra.pool,
    pepper: infra.pepper,
    bus: infra.bus,
    clock,
    trialDays: config.trialDays,
  });
  // One SMTP transport per process, or none without SMTP_URL (docs/configuration.md#email).
  const mailer = config.mail ? createMailer(config.mail) : null;
  const linkDeps = {
    db: infra.pool,
    pepper: infra.pepper,
    clock,
    publicBaseUrl: config.publicBaseUrl,
    mailer,
    logger,
  };
  // The scan-ingest queue is opened on the first upload (the kit keeps it): processes that never
  // take one skip it.
  const scanQueue = () => infra.queues.queue<ScanIngestPayload>(SCAN_INGEST_QUEUE);
  return {
    config,
    logger,
    clock,
    verifier,
    keys,
    workspaces,
    members: createMemberService({ db: infra.pool, clock }),
    invitations: createInvitationService(linkDeps),
    passwordResets: createPasswordResetService(linkDeps),
    workspaceSummary: createWorkspaceSummaries({
      db: infra.pool,
      workspaces,
      quota,
      plans: config.plans,
      clock,
    }),
    cases: createCaseService(infra.pool, workflows.caseDeliveries, clock),
    slaPolicy: createSlaPolicyService(infra.pool),
    caseSelection: createCaseSelectionService(infra.pool),
    usageReports: createUsageReports(infra.pool),
    audit: createAuditLog(infra.pool),
    enrichment: createEnrichmentLookup(infra.pool),
    kevCatalogLoaded: createKevCatalogCheck(infra.pool),
    sessions: createSessionStore(infra.pool, infra.pepper, clock),
    sso: createSsoService({
      db: infra.pool,
      pepper: infra.pepper,
      clock,
      publicBaseUrl: config.publicBaseUrl,
      allowLoopbackHttp: config.ssoAllowLoopbackHttp,
      allowPrivateHosts: config.ssoAllowPrivateHosts,
    }),
    meter,
    rateLimiter: createRateLimiter(
      infra.redis
        ? createRedisWindowCounter(infra.redis, config.redisPrefix)
        : createPgWindowCounter(infra.pool, () => clock().getTime()),
      { clock: () => clock().getTime() },
    ),
    quota,
    triage: triage.triage,
    caseTriage,
    queues: infra.queues,
    bus: infra.bus,
    pepper: infra.pepper,
    metrics: metrics.http,
    processMetrics: metrics,
    workflows,
    scans: {
      ...createScanService({
        pool: infra.pool,
        storage: scanStorage,
        enqueue: (p) => enqueueScanIngest(infra.queues, p),
        gate: uploadGate,
        limits: config.uploads,
        queueDeliveries: (recorded) => workflows.trigger.queueRecorded(recorded),
      }),
      triageView: (scan) => scanTriageView(infra.pool, scan),
      storage: scanStorage,
      uploadGate,
      get queue() {
        return scanQueue();
      },
    },
    retention: createRetentionSettings(infra.pool),
    workspaceArchive: { build: (session) => buildWorkspaceArchive({ db: infra.pool, clock }, session) },
    workspaceDeletions: createWorkspaceDeletions({
      db: infra.pool,
      bus: infra.bus,
      storage: scanStorage,
      clock,
      enqueue: (id) => enqueueWorkspaceDeletion(infra.queues, id),
      onEnqueueError: (err) =>
        logger.warn({ err: err.message }, 'workspace removal not queued; the maintenance run queues it'),
    }),
    exports: createExportService({
      db: infra.pool,
      storage: scanStorage,
      enqueue: (id) => enqueueExport(infra.queues, id),
      pepper: infra.pepper,
      clock,
      syncMaxRows: config.exportSyncMaxRows,
      ttlMs: 24 * 3600 * 1000,
      toolVersion: config.version,
      baseUrl: config.publicBaseUrl,
    }),
    async readiness() {
      // Each dependency within its own deadline: /readyz answers 503 in seconds, never hangs (docs/operations.md#failure-behaviour).
      await withDeadline(() => infra.pool.query('select 1'), READINESS_DEADLINE_MS, 'database');
      await withDeadline(() => infra.queues.ping(), READINESS_DEADLINE_MS, 'queue backend');
      await withDeadline(() => opened.ping(), READINESS_DEADLINE_MS, 'object storage');
    },
    async stop() {
      await meter.stop();
      await triage.close();
      opened.close();
      mailer?.close();
    },
  };
}
