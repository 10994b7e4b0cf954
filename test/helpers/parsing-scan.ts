/**
 * A scan as its worker leaves it just before completion, for tests of `completeScan`: inserted,
 * moved to `parsing`, and (for {@link parsedScan}) with its findings stored through the writer.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from '../../src/db/pool.js';
import { insertScan, startParsing } from '../../src/domain/scans/scan-store.js';
import { openScanWriter } from '../../src/domain/scans/scan-writer.js';
import type { Finding } from '../../src/parsers/index.js';
import type { ScanFormat } from '../../src/parsers/registry.js';

/** A scan of `workspaceId` in `parsing`, nothing stored yet; returns its id. */
export async function parsingScan(pool: Pool, workspaceId: string, format: ScanFormat): Promise<string> {
  const id = randomUUID();
  await insertScan(pool, {
    id,
    workspaceId,
    keyId: null,
    name: null,
    format,
    bytes: 1,
    sha256: 'x',
    storagePath: `${workspaceId}/${id}`,
    contentEncoding: null,
    idempotencyKey: null,
    asset: { name: null, environment: null, criticality: null, internetExposed: null },
  });
  await startParsing(pool, id);
  return id;
}

/** A scan in `parsing` with `findings` stored (renumbered from 0, as one parse numbers them). */
export async function parsedScan(
  pool: Pool,
  workspaceId: string,
  format: ScanFormat,
  findings: readonly Finding[],
): Promise<string> {
  const id = await parsingScan(pool, workspaceId, format);
  const writer = await openScanWriter(pool, { id, workspaceId });
  try {
    await writer.write(
      findings.map((f, i) => ({ ...f, recordIndex: i })),
      null,
    );
    await writer.flush();
  } finally {
    await writer.close();
  }
  return id;
}
