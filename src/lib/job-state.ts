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
