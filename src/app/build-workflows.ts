import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import type { Infrastructure } from './infrastructure.js';
import type { DeliveryDeps } from '../domain/workflows/deliver.js';
import type { InboundDeps } from '../domain/workflows/inbound.js';
import { localPacer, redisPacer } from '../domain/workflows/rate-limit.js';
import { requeueLostDeliveries } from '../domain/workflows/lost-deliveries.js';
import { announceSlaBreaches } from '../domain/workflows/sla-breaches.js';
import {
  createWorkflowTrigger,
  recordCaseDeliveries,
  type RecordedDeliveries,
  type WorkflowTrigger,
} from '../domain/workflows/trigger.js';
import type { CaseChangeDeliveries } from '../domain/cases/case-deliveries.js';
import { createWorkflowService, type WorkflowService } from '../domain/workflows/workflow-service.js';
import { enqueueDeliveries } from '../jobs/workflow-delivery.js';

/** Mapped workflows as a process holds them (docs/workflows.md). */
export interface Workflows {
  service: WorkflowService;
  inbound: InboundDeps;
  /** Queues what changes of cases recorded, after their commit. */
  trigger: WorkflowTrigger;
  /**
   * What every change of cases but a scan's records in its own transaction (a status, an owner,
   * an expired acceptance, a triage answer, a tracker's status flowing back) and queues after
   * its commit.
   */
  caseDeliveries: CaseChangeDeliveries<RecordedDeliveries>;
  /** What the `deliveries` worker runs with. */
  delivery: DeliveryDeps;
  /** Queues again pending deliveries whose job was lost (`requeueLostDeliveries`); maintenance runs it. */
  requeueLost(olderThanMs?: number): Promise<number>;
  /** Tells the workflows of each breach at `now` not yet told (`announceSlaBreaches`); maintenance runs it. */
  announceSlaBreaches(now: Date): Promise<{ breaches: number; deliveries: number }>;
}

/**
 * Wires workflows from the process's infrastructure: outbound calls follow the batch-webhook
 * URL rule and its settings (WEBHOOK_ALLOW_PRIVATE_HOSTS, WEBHOOK_ALLOW_LOOPBACK_HTTP) and each
 * workflow's rate limit, paced in Redis (shared by every process) when there is one, else in
 * this process; the `deliveries` queue is the kit's own, opened on the first delivery.
 */
export function buildWorkflows(
  config: Config,
  infra: Infrastructure,
  clock: () => Date,
  log?: Logger,
): Workflows {
  const outbound = {
    allowPrivateHosts: config.webhookAllowPrivateHosts,
    allowLoopbackHttp: config.webhookAllowLoopbackHttp,
  };
  const delivery: DeliveryDeps = {
    pool: infra.pool,
    pepper: infra.pepper,
    clock,
    baseUrl: config.publicBaseUrl,
    http: outbound,
    pacer: infra.redis
      ? redisPacer(infra.redis, config.redisPrefix, {
          onStoreError: (err) =>
            log?.warn({ err: err.message }, 'workflow rate limit paced in process: Redis did not answer'),
        })
      : localPacer(),
  };
  const enqueue = (workflowId: string, ids: string[]) => enqueueDeliveries(infra.queues, workflowId, ids);
  const onEnqueueFailed = (err: unknown, workflowId: string, deliveries: number) =>
    log?.warn(
      { err: (err as Error).message, workflowId, deliveries },
      'workflow deliveries stored but not queued: the maintenance sweep queues them',
    );
  const trigger = createWorkflowTrigger({ pool: infra.pool, enqueue, onEnqueueFailed });
  const caseDeliveries: CaseChangeDeliveries<RecordedDeliveries> = {
    record: (tx, workspaceId, caseIds, event, options) =>
      recordCaseDeliveries(tx, workspaceId, caseIds, event, options),
    queue: (recorded) => trigger.queueRecorded(recorded),
  };
  return {
    service: createWorkflowService({
      pool: infra.pool,
      pepper: infra.pepper,
      baseUrl: config.publicBaseUrl,
      outbound,
      delivery,
    }),
    inbound: { pool: infra.pool, pepper: infra.pepper, clock, deliveries: caseDeliveries },
    trigger,
    caseDeliveries,
    delivery,
    requeueLost: (olderThanMs) => requeueLostDeliveries(infra.pool, enqueue, olderThanMs),
    announceSlaBreaches: (now) => announceSlaBreaches({ pool: infra.pool, enqueue, onEnqueueFailed }, now),
  };
}
