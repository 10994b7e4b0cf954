import { ConfigError, loadConfig } from './lib/config.js';
import { createLogger } from './lib/logger.js';
import { describeError } from './lib/error-text.js';
import { openInfrastructure } from './app/infrastructure.js';
import { buildServices } from './app/services.js';
import { prepareDayOneEnrichment } from './app/day-one-enrichment.js';
import { startServer } from './api/server.js';
import { startWorkers } from './workers/main.js';
import { registerPages } from './api/pages/index.js';

/**
 * Process entry. `node dist/src/main.js [all|web|worker]`: `all` (the default, `npm start`)
 * runs the API and the workers in one process; the Procfile runs `web` and `worker`
 * separately so each can be scaled out. SIGTERM and SIGINT shut down gracefully: stop
 * accepting work, finish in-flight requests and jobs, then close queues and the database.
 */
const role = (process.argv[2] ?? 'all') as 'all' | 'web' | 'worker';

async function main(): Promise<void> {
  if (!['all', 'web', 'worker'].includes(role))
    throw new Error(`unknown role "${role}": use all, web or worker`);
  const config = loadConfig();
  // A person's terminal (`npm start`) gets short readable lines; `web`/`worker` keep JSON.
  const humane =
    config.logFormat === 'pretty' ||
    (config.logFormat === 'auto' && role === 'all' && process.stdout.isTTY === true);
  const logger = createLogger(config.logLevel, undefined, { pretty: humane });
  const infra = await openInfrastructure(config, logger, {
    migrate: role !== 'worker' || !config.databaseUrl,
  });
  // Before any triage can cache "no KEV record": the first start loads the shipped snapshot.
  const enrichment = role === 'worker' ? [] : await prepareDayOneEnrichment(config, infra.pool, logger);
  const services = await buildServices(config, infra, logger);
  const server =
    role === 'worker'
      ? null
      : await startServer(services, {
          root: (app) => registerPages(app, services),
          requestLog: humane ? 'line' : 'json',
        });
  const workers = role === 'web' ? null : await startWorkers(config, infra, services);

  if (server) {
    process.stdout.write(
      `\nVulnerability triage service (${role}) is running.\n` +
        `  Open ${server.url}/ in a browser, or call ${server.url}/api/v1/... with an X-API-Key.\n` +
        `  Database: ${config.databaseUrl ? 'DATABASE_URL' : `embedded PostgreSQL in ${config.dataDir}/postgres`}; ` +
        `queue: ${infra.queues.kind === 'redis' ? 'Redis (REDIS_URL)' : 'PostgreSQL (no REDIS_URL)'}.\n` +
        enrichment.map((line) => `  ${line}\n`).join('') +
        '\n',
    );
  } else {
    process.stdout.write(
      `Worker is running (queue: ${infra.queues.kind === 'redis' ? 'Redis' : 'PostgreSQL'}).\n`,
    );
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took longer than 30 s; exiting');
      process.exit(1);
    }, 30_000);
    force.unref();
    const step = async (name: string, fn: () => Promise<unknown> | undefined) => {
      const t = Date.now();
      await fn();
      logger.info({ step: name, ms: Date.now() - t }, 'shutdown step done');
    };
    await step('http', () => server?.close());
    await step('workers', () => workers?.close());
    await step('services', () => services.stop());
    await step('infrastructure', () => infra.close());
    clearTimeout(force);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    console.error(err.message);
  } else {
    console.error(`Failed to start: ${describeError(err)}`);
  }
  process.exit(1);
});
