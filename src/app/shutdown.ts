import type { Logger } from '../lib/logger.js';
import type { Infrastructure } from './infrastructure.js';

/**
 * How a process stops when a dependency does not answer (docs/operations.md#processes). With
 * everything reachable, a stop waits for in-flight requests and running jobs (bounded only by
 * the 30 s deadline of `stopOnSignals`). With Redis or PostgreSQL down, waiting cannot help: a
 * job cannot record its end, a queue cannot be closed politely, and an orchestrator's grace
 * period would end in SIGKILL. So each step gets a budget, the budgets add up to under 10 s, and
 * what a step leaves behind is recovered elsewhere: a job abandoned mid-run has its lock expire
 * and runs again on another worker (jobs are idempotent), a batch item or delivery whose job was
 * lost is found by the maintenance sweeps.
 */

/** The budgets of a stop with a dependency down, in milliseconds; their sum stays under 10 s. */
export const DEGRADED_STOP_BUDGETS_MS = {
  /** Asking each dependency for one round trip. */
  probe: 2_000,
  /** In-flight requests (each waits on Redis or the queue for at most 2 s) and running jobs, at once. */
  work: 4_000,
  /** The services' own buffers (request meter, leased AI calls). */
  services: 1_000,
  /** Queues, bus, Redis and the pools. */
  infrastructure: 1_500,
} as const;

/** The names of the dependencies of `infra` that do not answer one round trip within `ms`. */
export async function unreachableDependencies(infra: Infrastructure, ms: number): Promise<string[]> {
  const probes: [string, () => Promise<unknown>][] = [
    ['database', () => infra.pool.query('SELECT 1')],
    ['queue', () => infra.queues.ping()],
  ];
  if (infra.redis) probes.push(['redis', () => infra.redis!.ping()]);
  const answered = await Promise.all(probes.map(([, probe]) => within(probe(), ms)));
  return probes.flatMap(([name], i) => (answered[i] ? [] : [name]));
}

/** True when `step` resolves within `ms`; false when it fails or is still running (it is left to run). */
export async function within(step: Promise<unknown> | undefined, ms: number): Promise<boolean> {
  if (!step) return true;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      step.then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** One step of a stop: timed and logged; with a budget, given up (and logged) once it is spent. */
export async function stopStep(
  logger: Logger,
  name: string,
  fn: () => Promise<unknown> | undefined,
  budgetMs: number | null,
): Promise<void> {
  const started = Date.now();
  if (budgetMs === null) {
    await fn();
    logger.info({ step: name, ms: Date.now() - started }, 'shutdown step done');
    return;
  }
  const done = await within(Promise.resolve().then(fn), budgetMs);
  if (done) logger.info({ step: name, ms: Date.now() - started }, 'shutdown step done');
  else logger.warn({ step: name, ms: Date.now() - started }, 'shutdown step given up: a dependency is down');
}
