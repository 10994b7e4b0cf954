/**
 * EPSS full-file load: the importer (validating stream → COPY into a temp table → one
 * INSERT ... SELECT) against a baseline of multi-row INSERTs of 1,000 rows, on the same
 * 300k-row gzip file, into a fresh database, in one run.
 *
 *   npx tsx bench/enrichment/epss-load.ts [--rows 300000] [--runs 3]
 *
 * Uses BENCH_DATABASE_URL (a role that may CREATE DATABASE), default postgres://postgres@127.0.0.1:5432/test.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createGunzip, gzipSync } from 'node:zlib';
import pg from 'pg';
import { createOrm, migrate } from '../../src/db/orm.js';
import { createPool, withTransaction, type Pool } from '../../src/db/pool.js';
import { EpssCsvToCopy } from '../../src/domain/enrichment/epss-csv.js';
import { importEpss } from '../../src/domain/enrichment/epss-import.js';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '300000' }, runs: { type: 'string', default: '3' } },
});
const ROWS = Number(values.rows);
const RUNS = Number(values.runs);
const CORES = availableParallelism();
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DATA_DIR = fileURLToPath(new URL('../.data/', import.meta.url));

/** A deterministic EPSS-shaped file: real header and comment line, skewed scores, sorted ids. */
function generate(file: string, rows: number): void {
  let seed = 42;
  const rand = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const lines = ['#model_version:v2026.06.15,score_date:2026-09-29T12:00:22Z', 'cve,epss,percentile'];
  for (let i = 0; i < rows; i++) {
    const year = 1999 + Math.floor((i / rows) * 28);
    const epss = Math.min(1, rand() ** 6).toFixed(5);
    lines.push(`CVE-${year}-${String(10_000 + i).padStart(5, '0')},${epss},${rand().toFixed(5)}`);
  }
  writeFileSync(file, gzipSync(`${lines.join('\n')}\n`));
}

/** Baseline: same file, same validating parser, then INSERT ... VALUES of 1,000 rows at a time. */
async function loadWithInserts(pool: Pool, file: string): Promise<number> {
  return withTransaction(pool, async (client) => {
    await client.query('DELETE FROM epss_scores');
    let batch: string[][] = [];
    let total = 0;
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      const params: string[] = [];
      const tuples = batch.map((r, i) => {
        params.push(...r);
        return `($${i * 3 + 1}, $${i * 3 + 2}, $${i * 3 + 3}, '2026-09-29')`;
      });
      await client.query(
        `INSERT INTO epss_scores (cve_id, epss, percentile, score_date) VALUES ${tuples.join(',')}`,
        params,
      );
      total += batch.length;
      batch = [];
    };
    await pipeline(
      createReadStream(file),
      createGunzip(),
      new EpssCsvToCopy(),
      async (rows: AsyncIterable<Buffer>) => {
        let partial = '';
        for await (const chunk of rows) {
          const lines = (partial + chunk.toString()).split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) {
            batch.push(line.split('\t'));
            if (batch.length === 1_000) await flush();
          }
        }
        await flush();
      },
    );
    return total;
  });
}

/** Wall time and peak RSS growth over the RSS at the start (sampled every 10 ms). */
async function measure<T>(fn: () => Promise<T>): Promise<{ ms: number; rssMb: number; result: T }> {
  global.gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  const t = performance.now();
  try {
    const result = await fn();
    return { ms: performance.now() - t, rssMb: (peak - base) / 2 ** 20, result };
  } finally {
    clearInterval(sampler);
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const secs = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

async function main(): Promise<void> {
  mkdirSync(DATA_DIR, { recursive: true });
  const file = path.join(DATA_DIR, `epss-${ROWS}.csv.gz`);
  if (!existsSync(file)) generate(file, ROWS);

  const name = `bench_epss_${randomBytes(4).toString('hex')}`;
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
    const copy: number[] = [];
    const insert: number[] = [];
    const rss = { copy: 0, insert: 0 };
    const first = await measure(() => importEpss(pool, { file }));
    console.log(`first load into the empty table: importEpss ${secs(first.ms)}`);
    // Each measured load replaces yesterday's 300k rows, vacuumed as autovacuum would have done in the
    // day between two refreshes; without it, every run would also wade through the previous runs' dead rows.
    for (let run = 0; run < RUNS; run++) {
      await pool.query('VACUUM epss_scores');
      const a = await measure(() => importEpss(pool, { file }));
      if (a.result.rows !== ROWS) throw new Error(`importEpss loaded ${a.result.rows} rows`);
      await pool.query('VACUUM epss_scores');
      const b = await measure(() => loadWithInserts(pool, file));
      if (b.result !== ROWS) throw new Error(`the baseline loaded ${b.result} rows`);
      copy.push(a.ms);
      insert.push(b.ms);
      rss.copy = Math.max(rss.copy, a.rssMb);
      rss.insert = Math.max(rss.insert, b.rssMb);
      console.log(`run ${run + 1}: importEpss ${secs(a.ms)}, multi-row INSERT ${secs(b.ms)}`);
    }
    const version = (await pool.query<{ server_version: string }>('SHOW server_version')).rows[0]
      ?.server_version;
    const c = median(copy);
    const i = median(insert);
    const rate = (ms: number): string => `${Math.round(ROWS / (ms / 1000)).toLocaleString('en')} rows/s`;
    console.log(
      `${ROWS} rows, ${path.relative(process.cwd(), file)}, PostgreSQL ${version}, ${CORES} cores, load average ${loadavg()[0]?.toFixed(1)}`,
    );
    console.log(
      `importEpss (COPY to temp table + INSERT SELECT): median ${secs(c)} (${rate(c)}), peak RSS +${rss.copy.toFixed(0)} MiB`,
    );
    console.log(
      `baseline (INSERT ... VALUES, 1,000 rows each):   median ${secs(i)} (${rate(i)}), peak RSS +${rss.insert.toFixed(0)} MiB`,
    );
    console.log(`baseline / importEpss: ${(i / c).toFixed(2)}x`);
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

await main();
