/**
 * NVD import throughput: a gzip NVD API 2.0 document of N records (the records of
 * test/fixtures/enrichment/nvd-page-1.json, renumbered, ~3 KB each) streamed into a fresh
 * database with `importNvd`, first into an empty table, then again as all-unchanged upserts.
 *
 *   npx tsx bench/enrichment/nvd-load.ts [--records 50000]
 *
 * Uses BENCH_DATABASE_URL (a role that may CREATE DATABASE), default postgres://postgres@127.0.0.1:5432/test.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { createOrm, migrate } from '../../src/db/orm.js';
import { createPool } from '../../src/db/pool.js';
import { importNvd } from '../../src/domain/enrichment/nvd-import.js';

const { values } = parseArgs({ options: { records: { type: 'string', default: '50000' } } });
const RECORDS = Number(values.records);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DATA_DIR = fileURLToPath(new URL('../.data/', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../../test/fixtures/enrichment/nvd-page-1.json', import.meta.url));

function generate(file: string): number {
  const page = JSON.parse(readFileSync(FIXTURE, 'utf8')) as {
    vulnerabilities: Array<{ cve: { id: string } }>;
  };
  const items = Array.from({ length: RECORDS }, (_, i) => {
    const item = structuredClone(page.vulnerabilities[i % page.vulnerabilities.length]!);
    item.cve.id = `CVE-2097-${100_000 + i}`;
    return item;
  });
  const json = JSON.stringify({
    ...page,
    resultsPerPage: RECORDS,
    totalResults: RECORDS,
    vulnerabilities: items,
  });
  writeFileSync(file, gzipSync(json));
  return json.length;
}

async function main(): Promise<void> {
  mkdirSync(DATA_DIR, { recursive: true });
  const file = path.join(DATA_DIR, `nvd-${RECORDS}.json.gz`);
  if (!existsSync(file)) generate(file);
  const name = `bench_nvd_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client(ADMIN_URL);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const orm = await createOrm(url.toString(), { poolMax: 2 });
  await migrate(orm, url.toString());
  await orm.close(true);
  const pool = createPool(url.toString(), 2);
  try {
    for (const label of ['empty table', 'unchanged re-import']) {
      const base = process.memoryUsage().rss;
      let peak = base;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
      const result = await importNvd(pool, { file }).finally(() => clearInterval(sampler));
      const rate = Math.round(RECORDS / (result.durationMs / 1000)).toLocaleString('en');
      console.log(
        `${label}: ${RECORDS} records (${result.rows} scored) in ${(result.durationMs / 1000).toFixed(2)} s, ${rate} records/s, peak RSS +${((peak - base) / 2 ** 20).toFixed(0)} MiB`,
      );
    }
    console.log(`${availableParallelism()} cores, load average ${loadavg()[0]?.toFixed(1)}`);
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

await main();
