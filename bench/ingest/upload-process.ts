/**
 * Scan ingestion as deployed (docs/ingestion.md): the service in its own process (`src/main.ts all`: API,
 * scan-ingest worker and parser threads; queue on Redis), the upload sent by `curl` from another
 * process (streamed with `-T`), then `GET /api/pipeline/scan/:id` polled until `completed`.
 * Reports upload time, upload → completed, findings stored per second, and the server process's
 * RSS (idle, and its peak from /proc VmHWM: every thread of it, under tsx).
 *
 * Baselines in the same run, on the same file: the storage floor (PostgreSQL's own COPY of exactly
 * the rows the scan ended with, see `storageFloor`), and parsing it alone in this process's parser
 * pool with a consumer that does nothing — the floor set by parsing.
 *
 * `ingest-bench.ts` runs server, worker and client in ONE process (the client's `fetch` of a
 * large file inflates that process's RSS); this bench keeps them apart, as production does.
 *
 *   npx tsx bench/ingest/upload-process.ts [--size 1GB] [--format nessus] [--compiled]
 *
 * `--format`: any generated format (`bench/parsers/formats.ts`): nessus, qualys (asset data report),
 * qualys-scan (scan report), qualys-detection (host detection list), openvas, sarif, cyclonedx-json,
 * cyclonedx-xml, cli (JSON Lines), cli-json, `all`, or a comma-separated list, measured one after
 * the other on the same server. The upload's Content-Type is the format's (application/xml,
 * application/json, application/x-ndjson); the format itself is detected by the service, as for
 * a user who does not pass `format=`. `--compiled`: `npm run build` first; the server runs
 * `dist/src/main.js` as `npm start` does, without tsx in its memory.
 */
import { createReadStream, createWriteStream, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { createParserPool, parseFileInPool } from '../../src/workers/parser-pool.js';
import { signUpOverHttp, startServerProcess } from '../../test/helpers/server-process.js';
import { BackendCpuMeter } from '../lib/backend-cpu.js';
import { createBenchDatabase } from '../lib/bench-db.js';
import { cpuOf, curlUpload, memoryOf, resetPeak } from '../lib/process-stats.js';
import { FORMATS, generate, parseFormats, parseSize } from '../parsers/generate.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '100MB' },
    format: { type: 'string', default: 'nessus' },
    compiled: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
  },
});
const formats = parseFormats(values.format!);
const files = new Map<string, string>();
for (const f of formats) files.set(f, await generate(f, parseSize(values.size!), values.size!.toLowerCase()));

const db = await createBenchDatabase('bench_upload');
const server = await startServerProcess(
  'all',
  {
    DATABASE_URL: db.url,
    KEY_PEPPER: 'bench-pepper-'.padEnd(48, 'x'),
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    LOG_LEVEL: 'warn',
    PLANS_FILE: 'bench/auth/unlimited-plans.json',
  },
  {
    compiled: values.compiled!,
    nodeArgs: values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`] : [],
  },
);
const client = new pg.Client(db.url);
await client.connect();

const backends = new BackendCpuMeter(client);

/**
 * The storage floor (docs: bench/README.md "Ingest against the storage floor"): exactly the rows
 * the scan ended with — its findings (each with its evidence) and the cases it created — written
 * by PostgreSQL's own `COPY … FROM STDIN` into empty tables made `LIKE` the real ones
 * `INCLUDING ALL` (the same indexes, CHECK and NOT NULL constraints and defaults; foreign keys are
 * not copied by LIKE), both in one transaction, from a file written before the clock starts.
 * No parsing, fingerprinting, deduplication or bookkeeping: what no ingest path can beat.
 */
async function storageFloor(scanId: string): Promise<{ seconds: number; pgCpu: number; cases: number }> {
  const tables = [
    { table: 'findings', where: `scan_id = '${scanId}'` },
    { table: 'cases', where: `first_scan_id = '${scanId}'` },
  ];
  const prepared: { table: string; columns: string; file: string; rows: number }[] = [];
  for (const { table, where } of tables) {
    // Every stored column but generated ones (COPY cannot write those).
    const { rows } = await client.query<{ c: string }>(
      `SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position) AS c
         FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER'`,
      [table],
    );
    const columns = rows[0]!.c;
    const file = join(tmpdir(), `floor-${process.pid}-${table}.copy`);
    await pipeline(
      client.query(copyTo(`COPY (SELECT ${columns} FROM ${table} WHERE ${where}) TO STDOUT`)),
      createWriteStream(file),
    );
    const count = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`);
    await client.query(`DROP TABLE IF EXISTS floor_${table}`);
    await client.query(`CREATE TABLE floor_${table} (LIKE ${table} INCLUDING ALL)`);
    prepared.push({ table, columns, file, rows: Number(count.rows[0]!.n) });
  }
  // This client's own backend does the COPY: its CPU before and after.
  const own = (await client.query<{ p: number }>('SELECT pg_backend_pid() AS p')).rows[0]!.p;
  const c0 = cpuOf(own);
  const t0 = performance.now();
  await client.query('BEGIN');
  for (const { table, columns, file } of prepared)
    await pipeline(
      createReadStream(file),
      client.query(copyFrom(`COPY floor_${table} (${columns}) FROM STDIN`)),
    );
  await client.query('COMMIT');
  const seconds = (performance.now() - t0) / 1000;
  const pgCpu = cpuOf(own) - c0;
  for (const { table, file } of prepared) {
    await client.query(`DROP TABLE floor_${table}`);
    rmSync(file);
  }
  return { seconds, pgCpu, cases: prepared[1]!.rows };
}
try {
  const { key } = await signUpOverHttp(server.url);
  const pid = server.child.pid!;
  const idle = memoryOf(pid);
  const rows: Record<string, unknown>[] = [];
  for (const format of formats) {
    const file = files.get(format)!;
    const bytes = statSync(file).size;
    const load0 = loadavg()[0]!;
    resetPeak(pid);
    const serverCpu0 = cpuOf(pid);
    await backends.start();
    const t0 = performance.now();
    const { answer, uploadS } = curlUpload(
      server.url,
      key,
      file,
      FORMATS[format].contentType,
      `bench-${format}`,
    );
    const { scanId } = JSON.parse(answer) as { scanId: string };
    let scan: {
      status: string;
      format?: string;
      counts?: { findings?: number; new?: number };
      error?: unknown;
    };
    let polls = 0;
    for (;;) {
      const res = await fetch(`${server.url}/api/pipeline/scan/${scanId}`, { headers: { 'x-api-key': key } });
      scan = (await res.json()) as typeof scan;
      if (scan.status === 'completed' || scan.status === 'failed') break;
      // 50 ms: a quarter-second poll alone was up to 10% of a 30 MB scan's figure.
      await new Promise((r) => setTimeout(r, 50));
      if (++polls % 10 === 0) await backends.sample();
    }
    const totalS = (performance.now() - t0) / 1000;
    const serverCpu = cpuOf(pid) - serverCpu0;
    const pgCpu = await backends.stop();
    if (scan.status !== 'completed') throw new Error(`scan ${scan.status}: ${JSON.stringify(scan.error)}`);
    const after = memoryOf(pid);
    const floor = await storageFloor(scanId);

    // Baseline: parse only, same file, a parser pool in this process.
    const pool = createParserPool({ maxThreads: 1 });
    const p0 = performance.now();
    let parsed = 0;
    const scanFormat = FORMATS[format].scanFormat;
    await parseFileInPool(
      pool,
      { path: file, format: scanFormat, gzip: false, batchSize: 1000 },
      async (b) => {
        parsed += b.length;
      },
    );
    const parseS = (performance.now() - p0) / 1000;
    await pool.destroy();
    const stored = scan.counts?.findings ?? parsed;
    rows.push({
      format: `${format} (detected ${scan.format})`,
      MiB: Math.round(bytes / 2 ** 20),
      'findings stored': stored,
      'new cases': scan.counts?.new ?? null,
      'upload s': +uploadS.toFixed(1),
      'upload → completed s': +totalS.toFixed(1),
      'findings stored/s': Math.round(stored / totalS),
      'MB/s': +(bytes / 1e6 / totalS).toFixed(1),
      'server CPU s': +serverCpu.toFixed(1),
      'PostgreSQL CPU s': +pgCpu.toFixed(1),
      'µs CPU a finding': Math.round(((serverCpu + pgCpu) / Math.max(1, stored)) * 1e6),
      'parsed (baseline)': parsed,
      'parse only s (baseline)': +parseS.toFixed(1),
      'completed ÷ parse only': +(totalS / parseS).toFixed(2),
      'floor s (COPY of its findings and new cases)': +floor.seconds.toFixed(2),
      'floor PostgreSQL CPU s': +floor.pgCpu.toFixed(1),
      'floor ÷ upload → completed (target ≥ 0.5)': +(floor.seconds / totalS).toFixed(2),
      'load avg (1 min, start)': +load0.toFixed(1),
      'server RSS peak MiB (this scan)': after.peakMiB,
    });
    console.log(JSON.stringify(rows[rows.length - 1]));
  }
  console.log(
    `\nscan ingestion, server in its own process (${values.compiled ? 'compiled' : 'tsx'}), ${values.size} files, server RSS idle ${idle.rssMiB} MiB`,
  );
  console.table(rows);
} finally {
  await client.end();
  await server.stop();
  if (process.env.BENCH_SERVER_OUTPUT) console.log(server.output());
  await db.drop();
}
