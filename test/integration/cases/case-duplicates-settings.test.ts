import { createReadStream } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, type ScanTestApp } from '../../helpers/scan-app.js';
import { parsedScan } from '../../helpers/parsing-scan.js';
import { parseScanToArray, type Finding } from '../../../src/parsers/index.js';
import { completeScan } from '../../../src/domain/scans/ingest-store.js';
import { markScanDuplicates } from '../../../src/domain/cases/case-duplicates.js';
import { withTransaction } from '../../../src/db/pool.js';

/**
 * The duplicate marking's statement is planned for hash joins (nested loops off) and is not JIT
 * compiled: with nested loops off its cost estimate passes every JIT threshold, and compiling it
 * cost more than running it. Both settings are the transaction's own again afterwards.
 */
let t: ScanTestApp;
let qualys: Finding[];

beforeAll(async () => {
  t = await startScanApp({ worker: false });
  qualys = (
    await parseScanToArray(
      createReadStream(path.resolve('test/fixtures/scans/qualys/Qualys_Sample_Report.xml')),
    )
  ).findings;
}, 60_000);
afterAll(async () => {
  await t?.close();
});

interface Settings {
  jit: string;
  enable_nestloop: string;
}
const SETTINGS = `SELECT current_setting('jit') AS jit, current_setting('enable_nestloop') AS enable_nestloop`;

describe('the duplicate marking statement', () => {
  it.each(['on', 'off'])('runs without JIT and nested loops, and restores jit = %s', async (jit) => {
    const { workspaceId } = await signUp(t.app);
    const scanId = await parsedScan(t.infra.pool, workspaceId, 'qualys', qualys);
    expect(await completeScan(t.infra.pool, scanId, { bytes: 1, notes: [] })).toBe(true);
    const { during, after } = await withTransaction(t.infra.pool, async (tx) => {
      await tx.query(`SELECT set_config('jit', $1, true)`, [jit]);
      const during: Settings[] = [];
      const spy = {
        query: async (statement: { text: string }, values?: unknown[]) => {
          if (statement.text.includes('WITH fresh'))
            during.push((await tx.query<Settings>(SETTINGS)).rows[0]!);
          return tx.query(statement as pg.QueryConfig, values);
        },
      } as unknown as pg.PoolClient;
      await markScanDuplicates(spy, scanId, workspaceId);
      return { during, after: (await tx.query<Settings>(SETTINGS)).rows[0]! };
    });
    expect(during).toEqual([{ jit: 'off', enable_nestloop: 'off' }]);
    expect(after).toEqual({ jit, enable_nestloop: 'on' });
  });
});
