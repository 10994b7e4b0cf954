import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, type ScanTestApp } from '../../helpers/scan-app.js';
import { parseScan } from '../../../src/parsers/index.js';
import { insertScan } from '../../../src/domain/scans/scan-store.js';
import {
  ingestScan,
  type IngestScanDeps,
  type ParseStoredScan,
} from '../../../src/domain/scans/ingest-scan.js';

/**
 * The ingest use case without a queue or parser threads: `parse` is its dependency, so here it
 * runs in this process (the queue adapter and the threads are covered by the upload tests).
 */
const FIXTURE = path.resolve('test/fixtures/scans/openvas/many_vuln.xml');

let t: ScanTestApp;
let workspaceId: string;

beforeAll(async () => {
  t = await startScanApp({ worker: false });
  ({ workspaceId } = await signUp(t.app));
});
afterAll(async () => {
  await t?.close();
});

/** The same parse the threads run, in this process. */
const inProcess: ParseStoredScan = async (request, onBatch) => {
  const parse = parseScan(t.storage.open(request.key), {
    format: request.format,
    gzip: request.gzip,
    batchSize: request.batchSize,
    uploadAsset: request.uploadAsset,
  });
  for await (const batch of parse) await onBatch(batch, { bytesRead: 0 });
  return parse.result!;
};

function deps(parse: ParseStoredScan): IngestScanDeps {
  return { pool: t.infra.pool, storage: t.storage, logger: t.deps.logger, parse, batchSize: 7 };
}

/** A queued scan of the OpenVAS fixture, its file in the scan storage. */
async function storedScan(): Promise<string> {
  const id = randomUUID();
  const storagePath = `${workspaceId}/${id}`;
  const write = await t.storage.create(storagePath);
  await pipeline(createReadStream(FIXTURE), write.stream);
  await write.commit();
  await insertScan(t.infra.pool, {
    id,
    workspaceId,
    keyId: null,
    name: null,
    format: 'openvas',
    bytes: 1,
    sha256: 'x',
    storagePath,
    contentEncoding: null,
    idempotencyKey: null,
    asset: { name: null, environment: null, criticality: null, internetExposed: null },
  });
  return id;
}

async function scanRow(id: string) {
  const { rows } = await t.infra.pool.query(
    `SELECT status, findings_count, error->>'code' AS error_code, (error->>'line')::int AS error_line
       FROM scans WHERE id = $1`,
    [id],
  );
  return rows[0] as { status: string; findings_count: number; error_code: string | null; error_line: number };
}

describe('ingestScan', () => {
  it('completes a stored scan through the parse it is given, and keeps its file for the retention', async () => {
    const scanId = await storedScan();
    const outcome = await ingestScan(deps(inProcess), { scanId, workspaceId });
    expect(outcome).toEqual({ kind: 'completed', scanId, findings: expect.any(Number) });
    const findings = (outcome as { findings: number }).findings;
    expect(findings).toBeGreaterThan(7);
    expect(await scanRow(scanId)).toMatchObject({ status: 'completed', findings_count: findings });
    // Kept until the workspace's retention removes it (docs/operations.md#retention).
    expect(await t.storage.size(`${workspaceId}/${scanId}`)).toBeGreaterThan(0);
    // Run again (a retried job): the scan has ended, nothing is written twice.
    expect(await ingestScan(deps(inProcess), { scanId, workspaceId })).toEqual({ kind: 'skipped' });
  });

  it('fails the scan for good on a ParseError-like rejection, with its position', async () => {
    const scanId = await storedScan();
    // As it arrives from a parser thread: a plain object, matched by name and code.
    const broken: ParseStoredScan = () =>
      Promise.reject(
        Object.assign(new Error('unexpected end of document'), {
          name: 'ParseError',
          code: 'unparseable_scan',
          line: 12,
          column: 3,
        }),
      );
    const outcome = await ingestScan(deps(broken), { scanId, workspaceId });
    expect(outcome).toEqual({
      kind: 'unparseable',
      error: { code: 'unparseable_scan', message: 'unexpected end of document', line: 12, column: 3 },
    });
    expect(await scanRow(scanId)).toMatchObject({
      status: 'failed',
      error_code: 'unparseable_scan',
      error_line: 12,
    });
  });

  it('rejects on any other failure and leaves the scan to a retry', async () => {
    const scanId = await storedScan();
    const down: ParseStoredScan = () => Promise.reject(new Error('connection terminated'));
    await expect(ingestScan(deps(down), { scanId, workspaceId })).rejects.toThrow('connection terminated');
    expect(await scanRow(scanId)).toMatchObject({ status: 'parsing' });
    expect((await ingestScan(deps(inProcess), { scanId, workspaceId })).kind).toBe('completed');
  });
});
