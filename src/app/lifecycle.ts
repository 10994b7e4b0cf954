import type { FastifyInstance } from 'fastify';
import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import { assemble, type AssembleOptions, type Assembled } from './assemble.js';
import { startProcessWorkers } from './workers.js';
import { prepareDayOneEnrichment } from './day-one-enrichment.js';
import { buildApp } from '../api/app.js';
import { startServer } from '../api/server.js';
import { DEGRADED_STOP_BUDGETS_MS, stopStep, unreachableDependencies } from './shutdown.js';
import type { AppOptions } from '../api/app.js';

export type { AppOptions } from '../api/app.js';

/** `all` runs the API and the workers in one process; the Procfile runs `web` and `worker`. */
export type Role = 'all' | 'web' | 'worker';
export const ROLES: readonly Role[] = ['all', 'web', 'worker'];

/** An assembled process with its HTTP app built and ready for `inject` (or `listen`). */
export interface AssembledApp extends Assembled {
  app: FastifyInstance;
}

/** {@link assemble}, plus the HTTP app (API and console pages); `close()` closes the app first. */
export async function assembleApp(
  config: Config,
  logger: Logger,
  options: AssembleOptions = {},
  appOptions: AppOptions = {},
): Promise<AssembledApp> {
  const assembled = await assemble(config, logger, options);
  try {
    const app = await buildApp(assembled.services, appOptions);
    await app.ready();
    return {
      ...assembled,
      app,
      async close() {
        await app.close();
        await assembled.close();
      },
    };
  } catch (err) {
    await assembled.close();
    throw err;
  }
}

/** A started process: its listener (none for `worker`), and the one way to stop it. */
export interface RunningProcess extends Assembled {
  /** `http://host:port` of the listener, or null for the `worker` role. */
  url: string | null;
  /** Lines for the start banner (what the day-one enrichment loaded). */
  notes: string[];
  /**
   * Graceful stop, in this order: stop accepting HTTP work and finish in-flight requests, close
   * the workers (running jobs finish), stop the services, close queues, bus, Redis and database.
   * When a dependency does not answer, HTTP and the workers stop at once and every step has a
   * budget (`shutdown.ts`): the stop ends within 10 s.
   */
  stop(): Promise<void>;
}

/** Starts a process of `role`: the listener, the workers, or both. */
export async function startProcess(
  role: Role,
  config: Config,
  logger: Logger,
  options: AppOptions = {},
): Promise<RunningProcess> {
  let notes: string[] = [];
  const assembled = await assemble(config, logger, {
    // A worker on a shared database leaves migrating to the release process (or a web process).
    migrate: role !== 'worker' || !config.databaseUrl,
    // Before any triage can cache "no KEV record": the first start loads the shipped snapshot.
    prepare: async (infra) => {
      if (role !== 'worker') notes = await prepareDayOneEnrichment(config, infra.pool, logger);
    },
  });
  const { infra, services } = assembled;
  let server: Awaited<ReturnType<typeof startServer>> | null = null;
  let workers: { close(): Promise<void> } | null = null;
  try {
    if (role !== 'worker') server = await startServer(services, options);
    if (role !== 'web') workers = await startProcessWorkers(config, infra, services);
  } catch (err) {
    await server?.close();
    await assembled.close();
    throw err;
  }
  return {
    ...assembled,
    url: server?.url ?? null,
    notes,
    async stop() {
      const budgets = DEGRADED_STOP_BUDGETS_MS;
      const down = await unreachableDependencies(infra, budgets.probe);
      if (down.length === 0) {
        await stopStep(logger, 'http', () => server?.close(), null);
        await stopStep(logger, 'workers', () => workers?.close(), null);
        await stopStep(logger, 'services', () => services.stop(), null);
        await stopStep(logger, 'infrastructure', () => infra.close(), null);
        return;
      }
      // Waiting cannot bring a dependency back: stop taking HTTP requests and jobs at once, give
      // what is running a bounded time, and leave the rest to the lock expiry and the sweeps.
      logger.warn({ down }, 'a dependency does not answer: stopping within bounded steps');
      await Promise.all([
        stopStep(logger, 'http', () => server?.close(), budgets.work),
        stopStep(logger, 'workers', () => workers?.close(), budgets.work),
      ]);
      await stopStep(logger, 'services', () => services.stop(), budgets.services);
      await stopStep(logger, 'infrastructure', () => infra.close(), budgets.infrastructure);
    },
  };
}

/**
 * SIGTERM and SIGINT stop the process gracefully, once; a stop that takes longer than
 * `forceAfterMs` exits with status 1 rather than hang a deploy.
 */
export function stopOnSignals(running: RunningProcess, logger: Logger, forceAfterMs = 30_000): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error(`shutdown took longer than ${forceAfterMs / 1000} s; exiting`);
      process.exit(1);
    }, forceAfterMs);
    force.unref();
    await running.stop();
    clearTimeout(force);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
