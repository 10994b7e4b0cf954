import { Gauge, Histogram, type Registry } from 'prom-client';
import type { QueueHandle, QueueKit } from '../../jobs/queue-kit.js';
import type { JobObserver } from '../../jobs/timed-queue-kit.js';
import { SERVICE_QUEUES } from '../../jobs/service-queues.js';

export { SERVICE_QUEUES };

const DEPTH_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;
/** A scrape must answer even when the queue backend does not: a queue slower than this is left out. */
const DEPTH_DEADLINE_MS = 2_000;

/**
 * Job durations (recorded by `timedQueueKit`) and queue depth, read from the queue
 * backend at scrape time. Each queue's handle is opened on the first scrape and kept (the kit
 * closes it with the others), so a scrape costs one round trip per queue, not a connection.
 */
export function createQueueMetrics(registry: Registry, kit: QueueKit, names: readonly string[]): JobObserver {
  const handles = new Map<string, QueueHandle<unknown>>();
  const handle = (name: string) => {
    let h = handles.get(name);
    if (!h) handles.set(name, (h = kit.queue(name)));
    return h;
  };
  new Gauge({
    name: 'vuln_triage_queue_jobs',
    help: `Jobs in each queue by state (${DEPTH_STATES.join(', ')}), read from the queue backend at scrape time.`,
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      await Promise.all(
        names.map(async (queue) => {
          const counts = await withDeadline(handle(queue).getJobCounts(...DEPTH_STATES));
          // An unreachable backend leaves the queue out of this scrape: absent, not zero.
          if (!counts) return;
          for (const state of DEPTH_STATES) this.set({ queue, state }, counts[state] ?? 0);
        }),
      );
    },
  });
  const durations = new Histogram({
    name: 'vuln_triage_job_duration_seconds',
    help: 'Time a worker of this process spent on one job, by queue and outcome.',
    labelNames: ['queue', 'outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800],
    registers: [registry],
  });
  return {
    jobEnded: (queue, outcome, seconds) => durations.observe({ queue, outcome }, seconds),
  };
}

async function withDeadline<T>(p: Promise<T>): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), DEPTH_DEADLINE_MS);
  });
  try {
    return await Promise.race([p.catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}
