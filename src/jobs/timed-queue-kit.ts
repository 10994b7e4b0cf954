import type { QueueKit } from './queue-kit.js';

/** Sees each job a worker of this process ran: its queue, whether it succeeded, how long it took. */
export interface JobObserver {
  jobEnded(queue: string, outcome: 'completed' | 'failed', seconds: number): void;
}

/**
 * The same queue kit, whose workers time each job they run. Wraps the processor rather than
 * listening for events: it measures exactly the work, on both backends, retries included.
 */
export function timedQueueKit(kit: QueueKit, jobs: JobObserver): QueueKit {
  return {
    kind: kit.kind,
    connectionName: kit.connectionName,
    queue: (name) => kit.queue(name),
    ping: () => kit.ping(),
    close: () => kit.close(),
    worker(name, processor, opts) {
      const timed: typeof processor = async (...args) => {
        const started = process.hrtime.bigint();
        const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
        try {
          const result = await processor(...args);
          jobs.jobEnded(name, 'completed', seconds());
          return result;
        } catch (err) {
          jobs.jobEnded(name, 'failed', seconds());
          throw err;
        }
      };
      return kit.worker(name, timed, opts);
    },
  };
}
