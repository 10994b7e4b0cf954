import { ConfigError, loadConfig } from '../lib/config.js';
import { createLogger } from '../lib/logger.js';
import { describeError } from '../lib/error-text.js';
import { openInfrastructure } from '../app/infrastructure.js';

/** The Procfile `release` process: applies pending migrations, then exits. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const infra = await openInfrastructure(config, logger, { migrate: true });
  await infra.close();
  logger.info('migrations are up to date');
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : `Migration failed: ${describeError(err)}`);
  process.exit(1);
});
