import type { Logger } from '../lib/logger.js';
import type { JobQueues, QueueKit, WorkerHandle } from '../jobs/queue-kit.js';
import type { DeliveryDeps } from '../domain/workflows/deliver.js';
import type { BackoffOptions } from '../domain/workflows/backoff.js';
import { requeueLostDeliveries } from '../domain/workflows/lost-deliveries.js';
import {
  enqueueDeliveries,
  DELIVERY_QUEUE,
  DeliveryRetry,
  deliveryBackoffStrategy,
  deliveryProcessor,
  type DeliveryPayload,
} from '../jobs/workflow-delivery.js';

/**
 * The `deliveries` worker. Failed attempts are retried by BullMQ on the
 * schedule of `domain/workflows/backoff.ts` (the delay each attempt computed and stored as the
 * delivery's `nextAttemptAt`). Log lines name the delivery and the target's message — never a
 * credential, which only ever exists unsealed inside one attempt.
 */
export function startDeliveryWorker(
  queues: QueueKit,
  deps: DeliveryDeps,
  options: {
    logger: Logger;
    concurrency?: number;
    backoff?: BackoffOptions;
    /** Pending deliveries older than this without a job are queued again at start. @defaultValue 60_000 */
    orphanAgeMs?: number;
  },
): WorkerHandle {
  const worker = queues.worker<DeliveryPayload, string>(
    DELIVERY_QUEUE,
    deliveryProcessor(deps, options.backoff),
    {
      // A running delivery holds no pooled connection during its remote calls (a lease row, m019).
      concurrency: options.concurrency ?? 4,
      settings: { backoffStrategy: deliveryBackoffStrategy(options.backoff) },
    },
  );
  worker.on('failed', (...args: unknown[]) => {
    const [job, err] = args as [{ data?: DeliveryPayload } | undefined, Error | undefined];
    options.logger[err instanceof DeliveryRetry ? 'info' : 'warn'](
      { deliveryId: job?.data?.deliveryId, workflowId: job?.data?.workflowId, err: err?.message },
      err instanceof DeliveryRetry ? 'delivery will be retried' : 'delivery failed',
    );
  });
  worker.on('error', (...args: unknown[]) =>
    options.logger.warn({ err: (args[0] as Error)?.message }, 'delivery worker error'),
  );
  // Deliveries whose job went missing are queued again at start (and by every maintenance run).
  void requeueOrphans(queues, deps, options.orphanAgeMs ?? 60_000).catch((err: unknown) =>
    options.logger.warn({ err: (err as Error)?.message }, 'orphaned deliveries not re-queued'),
  );
  return worker;
}

/** Queues again the pending deliveries without a job (`requeueLostDeliveries`); returns how many. */
export async function requeueOrphans(
  queues: JobQueues,
  deps: Pick<DeliveryDeps, 'pool'>,
  olderThanMs: number,
): Promise<number> {
  return requeueLostDeliveries(
    deps.pool,
    (workflowId, ids) => enqueueDeliveries(queues, workflowId, ids),
    olderThanMs,
  );
}
