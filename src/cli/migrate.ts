import { ConfigError, loadConfig } from '../lib/config.js';
import { createLogger } from '../lib/logger.js';
import { describeError } from '../lib/error-text.js';
import { openDatabaseOnly } from '../app/database.js';

/**
 * The Procfile `release` process (`npm run db:migrate`): applies pending migrations, then
 * exits. It opens the database only: no Redis, no queues, no services.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env, { needsKeyPepper: false });
  const logger = createLogger(config.logLevel);
  const database = await openDatabaseOnly(config, logger);
  await database.close();
  logger.info('migrations are up to date');
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : `Migration failed: ${describeError(err)}`);
  process.exit(1);
});
