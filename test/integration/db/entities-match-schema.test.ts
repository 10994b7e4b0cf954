import { DatabaseSchema, type PostgreSqlDriver } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrm, migrate, type Orm } from '../../../src/db/orm.js';
import { createTestDatabase } from '../../helpers/db.js';

/**
 * The MikroORM entities describe tables the migrations own. If a migration changes a mapped
 * table (or an entity changes) without the other following, MikroORM's schema diff is no
 * longer empty and this test prints it.
 */
let db: { url: string; drop: () => Promise<void> };
let orm: Orm;

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await createOrm(db.url, { poolMax: 2 });
  await migrate(orm, db.url);
});

afterAll(async () => {
  await orm?.close(true);
  await db?.drop();
});

/** The SQL that would turn the migrated database into what the entities declare. */
async function schemaDiff(): Promise<string> {
  const mapped = Object.values(orm.getMetadata().getAll()).map((meta) => meta.tableName);
  const driver = orm.em.getDriver() as PostgreSqlDriver;
  // Read only the mapped tables: with the whole database, MikroORM would also drop the
  // foreign keys of unmapped tables that point at other unmapped tables (dropTables: false
  // keeps the tables, not those "orphaned" keys).
  const fromSchema = await DatabaseSchema.create(
    driver.getConnection(),
    driver.getPlatform(),
    orm.config,
    undefined,
    undefined,
    mapped,
  );
  return orm.schema.getUpdateSchemaSQL({ dropTables: false, wrap: false, fromSchema });
}

describe('MikroORM entities', () => {
  it('match the schema the migrations build (the schema diff is empty)', async () => {
    const diff = await schemaDiff();
    expect(diff.trim(), `entities differ from the migrated schema:\n${diff}`).toBe('');
  });
});
