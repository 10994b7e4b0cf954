import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import { openInfrastructure, type Infrastructure } from './infrastructure.js';
import { buildServices, type Services } from './services.js';

/*
 * Kept apart from lifecycle.ts (which brings the HTTP app and the workers): the admin CLI
 * assembles services without loading either.
 */

/** Options of {@link assemble}. */
export interface AssembleOptions {
  /** Apply pending migrations at start. @defaultValue true */
  migrate?: boolean;
  /** Queue namespace (Redis key prefix or PostgreSQL schema). @defaultValue REDIS_PREFIX, or `bullmq` */
  queueNamespace?: string;
  /** @defaultValue the wall clock */
  clock?: () => Date;
  /** Use the embedded PostgreSQL another process on this DATA_DIR runs (the admin CLI). */
  reuseRunningEmbedded?: boolean;
  /** Runs on the opened infrastructure before the services are built (the day-one KEV load). */
  prepare?: (infra: Infrastructure) => Promise<void>;
}

/** A process's infrastructure and services, not yet serving anything. */
export interface Assembled {
  infra: Infrastructure;
  services: Services;
  /** Stops the services, then closes the infrastructure (queues, bus, Redis, pools, ORM). */
  close(): Promise<void>;
}

/** Opens the infrastructure and builds the services on it. */
export async function assemble(
  config: Config,
  logger: Logger,
  options: AssembleOptions = {},
): Promise<Assembled> {
  const infra = await openInfrastructure(config, logger, options);
  try {
    await options.prepare?.(infra);
    const services = await buildServices(config, infra, logger, options.clock);
    return {
      infra,
      services,
      async close() {
        await services.stop();
        await infra.close();
      },
    };
  } catch (err) {
    await infra.close();
    throw err;
  }
}
