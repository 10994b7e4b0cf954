import pg from 'pg';
import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from './entities/index.js';
import { migrationsList } from './migrations/index.js';

export type Orm = MikroORM;

/**
 * Opens the ORM on `databaseUrl`. The caller owns it and must `close()` it. MikroORM serves the
 * migrations and the schema-equality test only: statements go through `pool.ts` and `sql.ts`,
 * so no process keeps an ORM (and its pool) open; see {@link migrateDatabase}.
 *
 * MikroORM creates a database it does not find, when it connects and again before migrating.
 * Only the embedded PostgreSQL of `npm start` may be created so (`createDatabase: true`); with
 * `DATABASE_URL` a missing database is a mistyped name or the wrong server, so
 * {@link assertDatabaseExists} refuses it first.
 */
export async function createOrm(
  databaseUrl: string,
  options: { poolMax?: number; createDatabase?: boolean } = {},
): Promise<Orm> {
  if (!options.createDatabase) await assertDatabaseExists(databaseUrl);
  return MikroORM.init({
    clientUrl: databaseUrl,
    ensureDatabase: options.createDatabase ?? false,
    entities,
    extensions: [Migrator],
    migrations: { migrationsList, transactional: true, allOrNothing: true, tableName: 'schema_migrations' },
    discovery: { warnWhenNoEntities: false },
    pool: { min: 0, max: options.poolMax ?? 10 },
    allowGlobalContext: false,
    debug: false,
    // Our logs never carry SQL parameters: they can hold hashes of keys and emails.
    logger: () => undefined,
  });
}

/**
 * Applies pending migrations. Safe when several processes start at once: a session
 * advisory lock, held on one dedicated connection, lets one of them migrate at a time.
 */
export async function migrate(orm: Orm, databaseUrl: string): Promise<string[]> {
  const lock = new pg.Client(databaseUrl);
  // A session ended under the lock must fail the migration, not end the process.
  lock.on('error', () => undefined);
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock(727001)');
    const done = await orm.getMigrator().up();
    return done.map((m) => m.name);
  } finally {
    await lock.query('select pg_advisory_unlock(727001)').catch(() => undefined);
    await lock.end();
  }
}

/** The start-up error for a `DATABASE_URL` whose database does not exist. */
export class MissingDatabaseError extends Error {
  constructor(
    readonly database: string,
    where: string,
  ) {
    super(
      `database "${database}" does not exist on ${where}: check the name in DATABASE_URL, ` +
        `or create it (createdb ${database}) before starting`,
    );
    this.name = 'MissingDatabaseError';
  }
}

/**
 * Connects once to `databaseUrl` and throws {@link MissingDatabaseError} when its database does
 * not exist (SQLSTATE 3D000). The message names the database, host and port, never the user or
 * password. Any other failure (refused, bad password) is rethrown as `pg` reported it.
 */
export async function assertDatabaseExists(databaseUrl: string): Promise<void> {
  const probe = new pg.Client(databaseUrl);
  probe.on('error', () => undefined);
  try {
    await probe.connect();
  } catch (err) {
    if ((err as { code?: unknown }).code === '3D000') {
      const url = new URL(databaseUrl);
      const name = decodeURIComponent(url.pathname.slice(1)) || url.username;
      throw new MissingDatabaseError(name, `${url.hostname}:${url.port || '5432'}`);
    }
    throw err;
  } finally {
    await probe.end().catch(() => undefined);
  }
}

/**
 * Opens a small ORM on `databaseUrl`, applies pending migrations (see {@link migrate}) and closes
 * it again: how a process migrates at start without holding a second pool for its lifetime.
 * Returns the names of the migrations it applied.
 */
export async function migrateDatabase(
  databaseUrl: string,
  options: { createDatabase?: boolean } = {},
): Promise<string[]> {
  const orm = await createOrm(databaseUrl, { poolMax: 2, createDatabase: options.createDatabase });
  try {
    return await migrate(orm, databaseUrl);
  } finally {
    await orm.close();
  }
}
