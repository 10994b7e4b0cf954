import { ConfigError, loadConfig } from './lib/config.js';
import { createLogger } from './lib/logger.js';
import { describeError } from './lib/error-text.js';
import { ROLES, startProcess, stopOnSignals, type Role } from './app/lifecycle.js';

/**
 * Process entry. `node dist/src/main.js [all|web|worker]`: `all` (the default, `npm start`)
 * runs the API and the workers in one process; the Procfile runs `web` and `worker`
 * separately so each can be scaled out. The process is assembled, started and stopped
 * (SIGTERM, SIGINT) by `app/lifecycle.ts`.
 */
const role = (process.argv[2] ?? 'all') as Role;

async function main(): Promise<void> {
  if (!ROLES.includes(role)) throw new Error(`unknown role "${role}": use all, web or worker`);
  const config = loadConfig();
  // A person's terminal (`npm start`) gets short readable lines; `web`/`worker` keep JSON.
  const humane =
    config.logFormat === 'pretty' ||
    (config.logFormat === 'auto' && role === 'all' && process.stdout.isTTY === true);
  const logger = createLogger(config.logLevel, undefined, { pretty: humane });
  const running = await startProcess(role, config, logger, { requestLog: humane ? 'line' : 'json' });
  const queue = running.infra.queues.kind === 'redis';
  if (running.url) {
    process.stdout.write(
      `\nVulnerability triage service (${role}) is running.\n` +
        `  Open ${running.url}/ in a browser, or call ${running.url}/api/v1/... with an X-API-Key.\n` +
        `  Database: ${config.databaseUrl ? 'DATABASE_URL' : `embedded PostgreSQL in ${config.dataDir}/postgres`}; ` +
        `queue: ${queue ? 'Redis (REDIS_URL)' : 'PostgreSQL (no REDIS_URL)'}.\n` +
        running.notes.map((line) => `  ${line}\n`).join('') +
        '\n',
    );
  } else {
    process.stdout.write(`Worker is running (queue: ${queue ? 'Redis' : 'PostgreSQL'}).\n`);
  }
  stopOnSignals(running, logger);
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    console.error(err.message);
  } else {
    console.error(`Failed to start: ${describeError(err)}`);
  }
  process.exit(1);
});
