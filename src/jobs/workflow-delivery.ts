import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import {
  attemptDelivery,
  recordAttemptOutcome,
  recordThrottled,
  type DeliveryDeps,
} from '../domain/workflows/deliver.js';
import { DELIVERY_ATTEMPTS, deliveryBackoffMs, type BackoffOptions } from '../domain/workflows/backoff.js';
import type { JobQueues } from './queue-kit.js';

/** Queue of workflow deliveries: one job per delivery row. */
export const DELIVERY_QUEUE = 'deliveries';

export interface DeliveryPayload {
  deliveryId: string;
  workflowId: string;
}

/** A failed attempt to retry after `delayMs` (the backoff strategy reads it). */
export class DeliveryRetry extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
    this.name = 'DeliveryRetry';
  }
}

/** The job's backoff type; the worker's `backoffStrategy` answers for it. */
export const DELIVERY_BACKOFF = 'workflow-delivery';

/**
 * Queues deliveries. The job id is the delivery id, so a trigger re-run enqueues each once.
 */
export async function enqueueDeliveries(
  queues: JobQueues,
  workflowId: string,
  deliveryIds: string[],
): Promise<void> {
  if (deliveryIds.length === 0) return;
  await queues.queue<DeliveryPayload>(DELIVERY_QUEUE).addBulk(
    deliveryIds.map((deliveryId) => ({
      name: 'deliver',
      data: { deliveryId, workflowId },
      opts: {
        jobId: deliveryId,
        attempts: DELIVERY_ATTEMPTS,
        backoff: { type: DELIVERY_BACKOFF },
        removeOnComplete: { age: 24 * 3600, count: 10_000 },
        removeOnFail: { age: 7 * 24 * 3600 },
      },
    })),
  );
}

/**
 * The worker's `settings.backoffStrategy`: the delay the failed attempt computed (and stored as
 * the delivery's `nextAttemptAt`), else the schedule's own.
 */
export function deliveryBackoffStrategy(o: BackoffOptions = {}) {
  return (attemptsMade: number, _type?: string, err?: Error): number =>
    err instanceof DeliveryRetry ? err.delayMs : deliveryBackoffMs(attemptsMade, undefined, o);
}

/**
 * The processor: one attempt, its outcome stored; a retryable failure is rethrown (attempts
 * and backoff apply, the target's Retry-After honoured), a final one is UnrecoverableError.
 * An attempt the workflow's own rate limit held back, or whose case another attempt holds, is no
 * failure: the job is delayed until
 * the limit has room (`DelayedError`: no attempt spent, the worker slot freed meanwhile).
 */
export function deliveryProcessor(deps: DeliveryDeps, backoff: BackoffOptions = {}) {
  return async (job: Job<DeliveryPayload>, token?: string): Promise<string> => {
    const { deliveryId, workflowId } = job.data;
    if (typeof deliveryId !== 'string' || typeof workflowId !== 'string')
      throw new UnrecoverableError('delivery job without its ids');
    const out = await attemptDelivery(deps, deliveryId);
    if (out.kind === 'skipped') return out.reason;
    if (out.kind === 'busy' || out.kind === 'queued') {
      // Another attempt holds the case, or an earlier event of it is pending (one at a time, in
      // order): come back, no attempt spent.
      await job.moveToDelayed(Date.now() + out.retryAfterMs, token);
      throw new DelayedError();
    }
    if (out.kind === 'delivered') {
      await recordAttemptOutcome(deps.pool, workflowId, out, null);
      return 'delivered';
    }
    if (out.kind === 'retry' && out.failure.throttled) {
      const at = Date.now() + (out.failure.retryAfterMs ?? 1_000);
      await recordThrottled(deps.pool, out.ids, new Date(at));
      await job.moveToDelayed(at, token);
      throw new DelayedError();
    }
    const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (out.kind === 'failed' || last) {
      await recordAttemptOutcome(deps.pool, workflowId, { ...out, kind: 'failed' }, null);
      throw new UnrecoverableError(out.failure.message);
    }
    const delayMs = deliveryBackoffMs(job.attemptsMade + 1, out.failure.retryAfterMs, backoff);
    await recordAttemptOutcome(deps.pool, workflowId, out, new Date(deps.clock().getTime() + delayMs));
    throw new DeliveryRetry(out.failure.message, delayMs);
  };
}
