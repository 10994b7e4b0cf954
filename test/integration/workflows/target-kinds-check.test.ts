import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrm, migrate } from '../../../src/db/orm.js';
import { WORKFLOW_KINDS } from '../../../src/domain/workflows/targets/registry.js';
import { createTestDatabase } from '../../helpers/db.js';

/**
 * The database's CHECK on `workflows.kind` lists exactly the registry's target kinds: a kind
 * added to the registry without its migration (or the reverse) fails here, not in production.
 */
let db: { url: string; drop: () => Promise<void> };

beforeAll(async () => {
  db = await createTestDatabase();
  const orm = await createOrm(db.url, { poolMax: 2 });
  await migrate(orm, db.url);
  await orm.close(true);
});

afterAll(async () => {
  await db?.drop();
});

describe('workflows.kind CHECK', () => {
  it('admits exactly the kinds of the target registry', async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ def: string }>(
        `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'workflows_kind_check'`,
      );
      expect(rows).toHaveLength(1);
      const kinds = [...rows[0]!.def.matchAll(/'([^']+)'::text/g)].map((m) => m[1]);
      expect([...kinds].sort()).toEqual([...WORKFLOW_KINDS].sort());
    } finally {
      await client.end();
    }
  });
});
