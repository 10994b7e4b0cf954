import { UnrecoverableError, type Job } from 'bullmq';

/**
 * What a maintenance sweep asks a queue about one job: BullMQ's `Queue#getJobState`, on either
 * backend, which answers `'unknown'` for a job that does not exist. Every `QueueHandle` is one.
 */
export interface JobStateProbe {
  getJobState(jobId: string): Promise<string>;
}

const OVER = new Set(['unknown', 'failed', 'completed']);

/** Whether no worker will run a job in this state again (short of an operator retrying it). */
export function jobIsOver(state: string): boolean {
  return OVER.has(state);
}

/**
 * Whether BullMQ moved the job to `failed` for good, as its `Job#shouldRetryJob` decides:
 * an UnrecoverableError (ours for a broken file, and BullMQ's own for a job that stalled out:
 * its stalled checker only marks the job, and the next worker to take it fails it with
 * `UnrecoverableError('job stalled more than allowable limit')` without running it), or the
 * last attempt. `finishedOn` is set only when the job was moved to failed rather than retried,
 * which also covers what the first two do not (a backoff that declines, `maxStartedAttempts`).
 * The workers' `failed` listeners end a scan or a batch item on it.
 */
export function isFinalFailure(
  job: Pick<Job, 'attemptsMade' | 'opts' | 'finishedOn'>,
  err: unknown,
): boolean {
  const name = (err as { name?: unknown } | null | undefined)?.name;
  const unrecoverable = err instanceof UnrecoverableError || name === 'UnrecoverableError';
  return unrecoverable || typeof job.finishedOn === 'number' || job.attemptsMade >= (job.opts.attempts ?? 1);
}
