import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import { migrateDatabase } from '../db/orm.js';
import { createPool, type Pool } from '../db/pool.js';
import { openEmbedded } from './infrastructure.js';

/** The database alone, migrated: for commands that need no queue, bus or key pepper. */
export interface DatabaseOnly {
  url: string;
  pool: Pool;
  close(): Promise<void>;
}

/**
 * Opens DATABASE_URL, or the embedded PostgreSQL of DATA_DIR (the one `npm start` runs when
 * it runs, else one started for this process), applies pending migrations and returns a pool.
 */
export async function openDatabaseOnly(config: Config, log: Logger): Promise<DatabaseOnly> {
  const embedded = config.databaseUrl ? null : await openEmbedded(config, log, true);
  const url = config.databaseUrl ?? embedded!.url;
  try {
    await migrateDatabase(url, { createDatabase: embedded !== null });
  } catch (err) {
    await embedded?.close();
    throw err;
  }
  const pool = createPool(url, 4);
  return {
    url,
    pool,
    async close() {
      await pool.end();
      await embedded?.close();
    },
  };
}
