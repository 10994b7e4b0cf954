import { createReadStream } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, type ScanTestApp } from '../../helpers/scan-app.js';
import { parsedScan } from '../../helpers/parsing-scan.js';
import { parseScanToArray, type Finding } from '../../../src/parsers/index.js';
import { completeScan } from '../../../src/domain/scans/ingest-store.js';

/**
 * docs/cases.md#one-vulnerability-one-case: a Qualys and a Nessus scan of one host completing at
 * the same moment make one original and one duplicate, never two originals (the marking of a
 * workspace's completions takes turns, and a case committed by the other counts as earlier).
 */
const FIXTURES = path.resolve('test/fixtures/scans');

let t: ScanTestApp;
let qualys: Finding[];
let nessus: Finding[];

beforeAll(async () => {
  t = await startScanApp({ worker: false });
  qualys = (await parseScanToArray(createReadStream(path.join(FIXTURES, 'qualys/Qualys_Sample_Report.xml'))))
    .findings;
  nessus = (
    await parseScanToArray(createReadStream(path.join(FIXTURES, 'derived/qualys-sample-hosts.nessus')))
  ).findings;
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe('two completions of one vulnerability at once', () => {
  it('make one original and one duplicate, in every round', async () => {
    for (let round = 0; round < 6; round++) {
      const { workspaceId } = await signUp(t.app);
      const q = await parsedScan(t.infra.pool, workspaceId, 'qualys', qualys);
      const n = await parsedScan(t.infra.pool, workspaceId, 'nessus', nessus);
      const order = round % 2 === 0 ? [q, n] : [n, q];
      const done = await Promise.all(
        order.map((id) => completeScan(t.infra.pool, id, { bytes: 1, notes: [] })),
      );
      expect(done).toEqual([true, true]);

      const { rows } = await t.infra.pool.query<{ id: string; scanner: string; duplicate_of: string | null }>(
        `SELECT id, scanner, duplicate_of FROM cases
         WHERE workspace_id = $1 AND 'CVE-1999-0524' = ANY(cve_ids)
           AND (ip = '64.41.200.243' OR fqdn = 'DEMO13.S02.SJC01.QUALYS.COM.')`,
        [workspaceId],
      );
      expect(rows).toHaveLength(2);
      const originals = rows.filter((r) => r.duplicate_of === null);
      expect(originals, `round ${round}`).toHaveLength(1);
      expect(rows.find((r) => r.duplicate_of !== null)!.duplicate_of).toBe(originals[0]!.id);
      // Duplicates are one level deep in the whole workspace.
      const chained = await t.infra.pool.query(
        `SELECT 1 FROM cases d JOIN cases o ON o.id = d.duplicate_of
         WHERE d.workspace_id = $1 AND o.duplicate_of IS NOT NULL`,
        [workspaceId],
      );
      expect(chained.rowCount).toBe(0);
    }
  }, 120_000);
});
