import pg from 'pg';
import { MikroORM, type EntityManager } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from './entities/index.js';
import { migrationsList } from './migrations/index.js';

export type Orm = MikroORM;
export type Em = EntityManager;

/** Opens the ORM on `databaseUrl`. The caller owns it and must `close()` it. */
export async function createOrm(databaseUrl: string, options: { poolMax?: number } = {}): Promise<Orm> {
  return MikroORM.init({
    clientUrl: databaseUrl,
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
