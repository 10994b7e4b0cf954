import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, type ScanTestApp } from '../../helpers/scan-app.js';
import { parsingScan } from '../../helpers/parsing-scan.js';
import { parseScanToArray, type Finding } from '../../../src/parsers/index.js';
import { insertScan, startParsing } from '../../../src/domain/scans/scan-store.js';
import { completeScan } from '../../../src/domain/scans/ingest-store.js';
import { failScanForGood } from '../../../src/domain/scans/scan-failure.js';
import { openScanWriter } from '../../../src/domain/scans/scan-writer.js';
import type { Pool } from '../../../src/db/pool.js';

/** One batch through its own scan writer, as a retried job would write it: returns how many were new. */
async function insertFindingBatch(
  pool: Pool,
  scan: { id: string; workspaceId: string },
  batch: Finding[],
): Promise<number> {
  const writer = await openScanWriter(pool, scan);
  try {
    await writer.write(batch, null);
    return await writer.flush();
  } finally {
    await writer.close();
  }
}

const FIXTURE = path.resolve('test/fixtures/scans/openvas/many_vuln.xml');

let t: ScanTestApp;
let workspaceId: string;
let key: string;
let findings: Finding[];

beforeAll(async () => {
  t = await startScanApp({ worker: false });
  ({ workspaceId, key } = await signUp(t.app));
  findings = (await parseScanToArray(createReadStream(FIXTURE))).findings;
});
afterAll(async () => {
  await t?.close();
});

const newScan = () => parsingScan(t.infra.pool, workspaceId, 'openvas');

async function counts(scanId: string) {
  const { rows } = await t.infra.pool.query(
    `SELECT (SELECT count(*) FROM findings WHERE scan_id = $1)::int AS findings,
            (SELECT count(*) FROM findings WHERE scan_id = $1 AND (raw_excerpt <> '' OR scanner_output IS NOT NULL))::int AS evidence`,
    [scanId],
  );
  return rows[0] as { findings: number; evidence: number };
}

describe('findings store', () => {
  it('re-inserting batches after a crash stores nothing twice', async () => {
    const scanId = await newScan();
    const scan = { id: scanId, workspaceId };
    expect(await insertFindingBatch(t.infra.pool, scan, findings.slice(0, 30))).toBe(30);
    // The retried job starts over from record 0 with bigger batches.
    expect(await insertFindingBatch(t.infra.pool, scan, findings.slice(0, 40))).toBe(10);
    expect(await insertFindingBatch(t.infra.pool, scan, findings.slice(40))).toBe(findings.length - 40);
    expect(await counts(scanId)).toEqual({ findings: findings.length, evidence: findings.length });
    // Nothing is visible before completion.
    const before = await t.infra.pool.query(`SELECT count(*)::int AS n FROM cases WHERE workspace_id = $1`, [
      workspaceId,
    ]);
    expect(before.rows[0].n).toBe(0);

    expect(await completeScan(t.infra.pool, scanId, { bytes: 1, notes: [] })).toBe(true);
    expect(await completeScan(t.infra.pool, scanId, { bytes: 1, notes: [] })).toBe(false);
    const scanRow = await t.infra.pool.query(
      `SELECT status, findings_count, new_cases, duplicates FROM scans WHERE id = $1`,
      [scanId],
    );
    const distinct = new Set(findings.map((f) => f.fingerprint)).size;
    expect(scanRow.rows[0]).toEqual({
      status: 'completed',
      findings_count: findings.length,
      new_cases: distinct,
      duplicates: findings.length - distinct,
    });
    const sightings = await t.infra.pool.query(
      `SELECT sum(sightings)::int AS n FROM cases WHERE workspace_id = $1`,
      [workspaceId],
    );
    expect(sightings.rows[0].n).toBe(findings.length);
  });

  it('stored rows that are not a prefix of the records are replaced, never duplicated', async () => {
    const scanId = await newScan();
    const scan = { id: scanId, workspaceId };
    await insertFindingBatch(t.infra.pool, scan, findings.slice(0, 30));
    await t.infra.pool.query(`DELETE FROM findings WHERE scan_id = $1 AND record_index = 10`, [scanId]);
    expect(await insertFindingBatch(t.infra.pool, scan, findings)).toBe(findings.length);
    expect(await counts(scanId)).toEqual({ findings: findings.length, evidence: findings.length });
    const distinct = await t.infra.pool.query(
      `SELECT count(DISTINCT record_index)::int AS n FROM findings WHERE scan_id = $1`,
      [scanId],
    );
    expect(distinct.rows[0].n).toBe(findings.length);
  });

  it('failing a scan removes every row it staged and records the error', async () => {
    const scanId = await newScan();
    await insertFindingBatch(t.infra.pool, { id: scanId, workspaceId }, findings.slice(0, 20));
    expect((await counts(scanId)).findings).toBe(20);
    const broken = { code: 'unparseable_scan', message: 'broken', line: 7, column: 3 };
    expect(await failScanForGood({ pool: t.infra.pool, storage: t.storage }, scanId, broken)).toBe(true);
    expect(await counts(scanId)).toEqual({ findings: 0, evidence: 0 });
    const row = await t.infra.pool.query(`SELECT status, error FROM scans WHERE id = $1`, [scanId]);
    expect(row.rows[0]).toEqual({
      status: 'failed',
      error: { code: 'unparseable_scan', message: 'broken', line: 7, column: 3 },
    });
  });

  it('deleting a scan deletes its findings with their evidence (m017 cascade, no per-row key; m020)', async () => {
    const scanId = await newScan();
    await insertFindingBatch(t.infra.pool, { id: scanId, workspaceId }, findings.slice(0, 25));
    expect(await counts(scanId)).toEqual({ findings: 25, evidence: 25 });
    await t.infra.pool.query(`DELETE FROM scans WHERE id = $1`, [scanId]);
    expect(await counts(scanId)).toEqual({ findings: 0, evidence: 0 });
  });

  it('a batch for a scan that no longer exists is refused, and nothing of it is stored', async () => {
    const scanId = await newScan();
    const writer = await openScanWriter(t.infra.pool, { id: scanId, workspaceId });
    try {
      await t.infra.pool.query(`DELETE FROM scans WHERE id = $1`, [scanId]);
      await writer.write(findings.slice(0, 5), null);
      await expect(writer.flush()).rejects.toThrow(/no longer exists/);
    } finally {
      await writer.close();
    }
    expect(await counts(scanId)).toEqual({ findings: 0, evidence: 0 });
  });

  it('deleting a workspace deletes its scans, findings, evidence and cases', async () => {
    const other = await signUp(t.app);
    const id = randomUUID();
    await insertScan(t.infra.pool, {
      id,
      workspaceId: other.workspaceId,
      keyId: null,
      name: null,
      format: 'openvas',
      bytes: 1,
      sha256: 'x',
      storagePath: `${other.workspaceId}/${id}`,
      contentEncoding: null,
      idempotencyKey: null,
      asset: { name: null, environment: null, criticality: null, internetExposed: null },
    });
    await startParsing(t.infra.pool, id);
    await insertFindingBatch(t.infra.pool, { id, workspaceId: other.workspaceId }, findings);
    expect(await completeScan(t.infra.pool, id, { bytes: 1, notes: [] })).toBe(true);
    const casesOf = async () =>
      (
        await t.infra.pool.query(`SELECT count(*)::int AS n FROM cases WHERE workspace_id = $1`, [
          other.workspaceId,
        ])
      ).rows[0].n as number;
    expect(await casesOf()).toBeGreaterThan(0);
    await t.infra.pool.query(`DELETE FROM workspaces WHERE id = $1`, [other.workspaceId]);
    expect(await casesOf()).toBe(0);
    expect(await counts(id)).toEqual({ findings: 0, evidence: 0 });
  });

  it('text with NUL bytes, quotes, commas and newlines survives the COPY path', async () => {
    const scanId = await newScan();
    const odd: Finding = {
      ...findings[0]!,
      recordIndex: 0,
      title: 'a "quoted", multi\nline\u0000 title',
      cveIds: ['CVE-2021-44228', 'weird,"id"'],
      rawExcerpt: '',
    };
    await insertFindingBatch(t.infra.pool, { id: scanId, workspaceId }, [odd]);
    const { rows } = await t.infra.pool.query(`SELECT title, cve_ids FROM findings WHERE scan_id = $1`, [
      scanId,
    ]);
    expect(rows[0]).toEqual({
      title: 'a "quoted", multi\nline title',
      cve_ids: ['CVE-2021-44228', 'weird,"id"'],
    });
    const ev = await t.infra.pool.query(`SELECT raw_excerpt FROM findings WHERE scan_id = $1`, [scanId]);
    expect(ev.rows[0].raw_excerpt).toBe('');
  });

  it('the KEV filter of GET /api/v1/cases and /findings joins the enrichment store', async () => {
    const withCve = findings.find((f) => f.cveIds.length > 0)!;
    const cve = withCve.cveIds[0]!;
    await t.infra.pool.query(`INSERT INTO kev_entries (cve_id) VALUES ($1) ON CONFLICT DO NOTHING`, [cve]);
    const kev = await t.app.inject({
      method: 'GET',
      url: '/api/v1/cases?kev=true&limit=200',
      headers: { 'x-api-key': key },
    });
    const data = kev.json().data as { kev: boolean; cveIds: string[] }[];
    expect(data.length).toBeGreaterThan(0);
    expect(data.every((c) => c.kev && c.cveIds.includes(cve))).toBe(true);
    const notKev = await t.app.inject({
      method: 'GET',
      url: '/api/v1/cases?kev=false&limit=200',
      headers: { 'x-api-key': key },
    });
    expect((notKev.json().data as { kev: boolean }[]).some((c) => c.kev)).toBe(false);
    const findingsKev = await t.app.inject({
      method: 'GET',
      url: `/api/v1/findings?kev=true&cve=${cve}`,
      headers: { 'x-api-key': key },
    });
    expect((findingsKev.json().data as { kev: boolean }[]).every((f) => f.kev)).toBe(true);
    expect(findingsKev.json().data.length).toBeGreaterThan(0);
  });
});
