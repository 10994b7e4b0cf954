import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import { openEmbeddedDatabase, type OpenedEmbedded } from '../db/embedded-record.js';
import { assertDatabaseExists, migrateDatabase } from '../db/orm.js';
import { createPool, type Pool } from '../db/pool.js';
import { createQueueKit, type QueueKit } from '../jobs/queue-kit.js';
import {
  createPgInvalidationBus,
  createRedisInvalidationBus,
  type InvalidationBus,
} from '../domain/keys/invalidation-bus.js';

/**
 * The connections a process holds: database (embedded when no DATABASE_URL), the pool every
 * statement goes through, a pool of relaxed commits, Redis when configured, the invalidation bus
 * and the queue kit. MikroORM is opened only to migrate, and closed before this returns.
 * `close()` releases them in the reverse order of opening.
 */
export interface Infrastructure {
  databaseUrl: string;
  pepper: string;
  pool: Pool;
  /** Commits without waiting for the WAL flush: for writes whose loss in a crash is harmless. */
  relaxedPool: Pool;
  redis: Redis | null;
  bus: InvalidationBus;
  queues: QueueKit;
  close(): Promise<void>;
}

export async function openInfrastructure(
  config: Config,
  log: Logger,
  options: {
    migrate?: boolean;
    queueNamespace?: string;
    /** Use the embedded PostgreSQL another process on this DATA_DIR runs (the admin CLI). */
    reuseRunningEmbedded?: boolean;
  } = {},
): Promise<Infrastructure> {
  let embedded: OpenedEmbedded | null = null;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await openEmbedded(config, log, options.reuseRunningEmbedded ?? false);
    databaseUrl = embedded.url;
  }
  const pepper = config.keyPepper ?? localPepper(config.dataDir);
  // Creating the database is the embedded mode's alone: with DATABASE_URL a missing one is refused.
  if (options.migrate ?? true) {
    const applied = await migrateDatabase(databaseUrl, { createDatabase: embedded !== null });
    if (applied.length > 0) log.info({ applied }, 'database migrated');
  } else if (!embedded) {
    await assertDatabaseExists(databaseUrl);
  }
  const pool = createPool(databaseUrl);
  const relaxedPool = createPool(databaseUrl, 5, { synchronousCommit: false });
  const busError = (err: Error, what: string): void => log.warn({ err: err.message }, `${what} failed`);
  let redis: Redis | null = null;
  let bus: InvalidationBus;
  if (config.redisUrl) {
    redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 3, enableOfflineQueue: true });
    redis.on('error', (err) => log.warn({ err: err.message }, 'redis connection error'));
    bus = createRedisInvalidationBus(redis, config.redisPrefix, { onError: busError });
  } else {
    bus = createPgInvalidationBus(pool, databaseUrl, { onError: busError });
  }
  const queues = createQueueKit({
    redisUrl: config.redisUrl,
    databaseUrl,
    namespace: options.queueNamespace ?? (config.redisUrl ? config.redisPrefix : undefined),
  });
  return {
    databaseUrl,
    pepper,
    pool,
    relaxedPool,
    redis,
    bus,
    queues,
    async close() {
      await queues.close();
      await bus.close();
      redis?.disconnect();
      await pool.end();
      await relaxedPool.end();
      await embedded?.close();
    },
  };
}

/** The embedded PostgreSQL of DATA_DIR: another process's when asked and one runs, else our own. */
export async function openEmbedded(
  config: Config,
  log: Logger,
  reuseRunning: boolean,
): Promise<OpenedEmbedded> {
  const embedded = await openEmbeddedDatabase(config.dataDir, config.embeddedPostgresPort, {
    reuseRunning,
    log: (line) => log.debug({ postgres: line.trim() }),
  });
  log.info(
    { dir: path.join(config.dataDir, 'postgres'), port: new URL(embedded.url).port, shared: embedded.shared },
    embedded.shared
      ? 'no DATABASE_URL: using the running embedded PostgreSQL'
      : 'no DATABASE_URL: started the embedded PostgreSQL',
  );
  return embedded;
}

/** Embedded mode only: a pepper generated once and kept beside the data (mode 0600). */
function localPepper(dataDir: string): string {
  const file = path.join(dataDir, 'key-pepper');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const pepper = randomBytes(32).toString('hex');
  writeFileSync(file, pepper, { mode: 0o600 });
  chmodSync(file, 0o600);
  return pepper;
}
