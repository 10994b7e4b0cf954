import { UnrecoverableError, type Job } from 'bullmq';
import type { RemovalOutcome, WorkspaceDeletions } from '../domain/workspaces/workspace-deletion.js';
import type { JobQueues } from './queue-kit.js';

/** Queue of the removal of a deleted workspace's data (docs/operations.md#end-of-life). */
export const WORKSPACE_DELETION_QUEUE = 'workspace-deletion';

export interface WorkspaceDeletionPayload {
  deletionId: string;
}

/**
 * Queues a deletion's removal. The job id is the deletion id, so a request answered twice, or
 * the maintenance run queuing an unfinished removal again, adds one job while one is waiting.
 * Every step of the removal is safe to repeat, so attempts simply run it again.
 */
export async function enqueueWorkspaceDeletion(queues: JobQueues, deletionId: string): Promise<void> {
  await queues.queue<WorkspaceDeletionPayload>(WORKSPACE_DELETION_QUEUE).add(
    'remove',
    { deletionId },
    {
      jobId: deletionId,
      attempts: 8,
      backoff: { type: 'exponential', delay: 5_000 },
      // Removed when done either way: an unfinished removal is queued again by the maintenance
      // run (`requeueUnfinished`), which a kept failed job's id would silently dedupe.
      removeOnComplete: true,
      removeOnFail: true,
    },
  );
}

/** The processor: one run of the removal (`domain/workspaces/workspace-deletion.ts`). */
export function workspaceDeletionProcessor(deletions: Pick<WorkspaceDeletions, 'remove'>) {
  return async (job: Job<WorkspaceDeletionPayload>): Promise<RemovalOutcome> => {
    const { deletionId } = job.data;
    if (typeof deletionId !== 'string') throw new UnrecoverableError('deletion job without a deletion id');
    return deletions.remove(deletionId);
  };
}
