import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/test-app.js';
import { SCAN_FORMATS } from '../../../src/parsers/index.js';

/**
 * A migration cannot read the parsers' registry, so the `scans.format` CHECK constraint is the
 * one list of formats kept by hand: a new format needs a migration that widens it, and this test
 * says so (see `test/unit/parsers/registry.test.ts` for the other lists).
 */
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('the scans table', () => {
  it('accepts exactly the formats of the registry (its CHECK constraint)', async () => {
    const { rows } = await t.infra.pool.query<{ def: string }>(
      `SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
        WHERE c.conrelid = 'scans'::regclass AND c.contype = 'c' AND pg_get_constraintdef(c.oid) LIKE '%format%'`,
    );
    expect(rows).toHaveLength(1);
    const allowed = [...rows[0]!.def.matchAll(/'([^']+)'::text/g)].map((m) => m[1]);
    expect(allowed).toEqual([...SCAN_FORMATS]);
  });
});
