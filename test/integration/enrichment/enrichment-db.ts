import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOrm, migrate } from '../../../src/db/orm.js';
import { createPool, type Pool } from '../../../src/db/pool.js';
import { createTestDatabase } from '../../helpers/db.js';

/** The enrichment fixtures (test/fixtures/enrichment/README.md names each one's source). */
export const LOCAL = fileURLToPath(new URL('../../fixtures/enrichment/', import.meta.url));
/** The CISA KEV catalog 2025.08.25, gzipped as kept in the repository (importers sniff gzip). */
export const KEV_CATALOG = path.join(LOCAL, 'known_exploited_vulnerabilities.json.gz');
export const EPSS_SAMPLE = path.join(LOCAL, 'epss_scores-sample.csv');

export interface EnrichmentDb {
  pool: Pool;
  close(): Promise<void>;
}

/** A fresh, migrated database for one test file. */
export async function openEnrichmentDb(): Promise<EnrichmentDb> {
  const db = await createTestDatabase();
  const orm = await createOrm(db.url, { poolMax: 2 });
  try {
    await migrate(orm, db.url);
  } finally {
    await orm.close(true);
  }
  const pool = createPool(db.url, 4);
  return {
    pool,
    close: async () => {
      await pool.end();
      await db.drop();
    },
  };
}

/** A scratch directory for generated files (gzip, truncated copies), removed by `cleanup`. */
export async function scratchDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'enrichment-test-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export interface FakeFeedServer {
  baseUrl: string;
  requests: Array<{ url: string; authorization: string | undefined }>;
  close(): Promise<void>;
}

/** A feed server on 127.0.0.1: `routes` maps a path to a status and body. */
export async function startFeedServer(
  routes: Record<string, { status?: number; body: Buffer | string; contentType?: string; stall?: boolean }>,
): Promise<FakeFeedServer> {
  const requests: FakeFeedServer['requests'] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.push({ url: req.url ?? '', authorization: req.headers.authorization });
    const route = routes[new URL(req.url ?? '/', 'http://x').pathname];
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(route.status ?? 200, { 'content-type': route.contentType ?? 'application/octet-stream' });
    // A stalled route sends the start of its body and then nothing, never ending the response.
    if (route.stall) res.write(route.body);
    else res.end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}

/** Rows of `enrichment_imports`, oldest first. */
export async function importLog(
  pool: Pool,
): Promise<Array<{ source: string; origin: string; rows: number }>> {
  const { rows } = await pool.query<{ source: string; origin: string; rows: number }>(
    'SELECT source, origin, rows FROM enrichment_imports ORDER BY id',
  );
  return rows;
}
