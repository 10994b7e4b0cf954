/**
 * What the database-half ingest benches (`write-bench.ts`, `mark-duplicates.ts`) share: a
 * generated file parsed once into memory, a fresh migrated database with the service's
 * infrastructure on it, and scans written through the real scan writer (no HTTP, no queue).
 */
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/lib/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { openInfrastructure } from '../../src/app/infrastructure.js';
import type { Pool } from '../../src/db/pool.js';
import { createParserPool, parseFileInPool } from '../../src/workers/parser-pool.js';
import { openScanWriter } from '../../src/domain/scans/scan-writer.js';
import type { Finding, ParseResult } from '../../src/parsers/index.js';
import { FORMATS, generate, parseSize, type BenchFormat } from '../parsers/generate.js';
import { createBenchDatabase } from '../lib/bench-db.js';
export { parsingScan } from '../../test/helpers/parsing-scan.js';

/** A generated file of `format` and `size` (e.g. `30MB`), parsed in the parser pool into memory. */
export async function parseGenerated(
  format: BenchFormat,
  size: string,
): Promise<{ batches: Finding[][]; parsed: ParseResult }> {
  const file = await generate(format, parseSize(size), size.toLowerCase());
  const parserPool = createParserPool({ maxThreads: 2 });
  const batches: Finding[][] = [];
  try {
    const parsed = await parseFileInPool(
      parserPool,
      { path: file, format: FORMATS[format].scanFormat, gzip: false, batchSize: 1000 },
      async (b) => {
        batches.push(b);
      },
    );
    return { batches, parsed };
  } finally {
    await parserPool.destroy();
  }
}

/** A fresh migrated database named after `name`, the service's infrastructure on it, one workspace. */
export async function openBenchStore(name: string) {
  const db = await createBenchDatabase(name);
  const config = loadConfig({
    DATABASE_URL: db.url,
    KEY_PEPPER: 'bench-pepper-'.padEnd(48, 'x'),
    REDIS_URL: '',
    PORT: '0',
    LOG_LEVEL: 'silent',
    SCAN_STORAGE_DIR: '/tmp',
    PLANS_FILE: new URL('../auth/unlimited-plans.json', import.meta.url).pathname,
  });
  const infra = await openInfrastructure(config, createLogger('silent'));
  const pool = infra.pool;
  const workspaceId = randomUUID();
  await pool.query(`INSERT INTO workspaces (id, name, plan) VALUES ($1, 'bench', 'service')`, [workspaceId]);
  return {
    pool,
    workspaceId,
    async close(): Promise<void> {
      await infra.close();
      await db.drop();
    },
  };
}

/** Stores `batches` as the findings of scan `id` through the scan writer. */
export async function writeFindings(
  pool: Pool,
  scan: { id: string; workspaceId: string },
  batches: readonly Finding[][],
): Promise<void> {
  const writer = await openScanWriter(pool, scan);
  try {
    for (const b of batches) await writer.write(b, null);
    await writer.flush();
  } finally {
    await writer.close();
  }
}
