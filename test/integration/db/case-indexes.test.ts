import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase } from '../../../src/db/orm.js';
import { createTestDatabase } from '../../helpers/db.js';

/**
 * Every index of `cases` is written once per new case by a scan's completion
 * (docs/architecture.md#one-scan-upload), so an index is there only for a read that uses it.
 */
let db: { url: string; drop: () => Promise<void> };
let client: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase();
  await migrateDatabase(db.url);
  client = new pg.Client(db.url);
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await db?.drop();
});

async function caseIndexes(): Promise<Map<string, string>> {
  const { rows } = await client.query<{ indexname: string; indexdef: string }>(
    `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'cases'`,
  );
  return new Map(rows.map((r) => [r.indexname, r.indexdef]));
}

describe('the indexes of cases', () => {
  it('has none over the vulnerability keys, which the duplicate marking joins by hash', async () => {
    const over = [...(await caseIndexes()).values()].filter((def) => /vuln_keys/.test(def));
    expect(over).toEqual([]);
  });

  it('indexes the owner of owned cases only, so a case created without one writes no entry', async () => {
    expect((await caseIndexes()).get('cases_ws_assignee_idx')).toMatch(/WHERE \(assignee IS NOT NULL\)$/);
  });

  it('still answers the owner filters from that index', async () => {
    await client.query(`SET enable_seqscan = off`);
    const plan = async (where: string) =>
      (
        await client.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT id FROM cases WHERE workspace_id = '00000000-0000-0000-0000-000000000001' AND ${where}`,
        )
      ).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    expect(await plan(`assignee = 'a@example.com'`)).toMatch(/cases_ws_assignee_idx/);
    expect(await plan(`assignee IS NOT NULL`)).toMatch(/cases_ws_assignee_idx/);
  });
});
