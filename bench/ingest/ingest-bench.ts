/**
 * End-to-end scan ingestion: upload a generated Nessus file over real HTTP, poll until the scan
 * is completed, and report upload time, upload-to-completed time, findings stored per second
 * and peak RSS. In the same run, on the same file and database, three baselines:
 *   - parse only: the parser pool with a no-op consumer (the floor set by parsing);
 *   - parse + COPY: the same rows streamed with COPY into a copy of the findings table
 *     (the floor set by the database write path, without dedupe, cases or evidence);
 *   - one INSERT per row on a slice, extrapolated (what "one ORM flush per row" costs).
 *
 *   npx tsx bench/ingest/ingest-bench.ts [--size 100MB] [--redis] [--slice 2000]
 *
 * Needs PostgreSQL (BENCH_DATABASE_URL, default the machine's on 127.0.0.1:5432).
 */
import { createReadStream, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { loadConfig } from '../../src/lib/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { openInfrastructure } from '../../src/app/infrastructure.js';
import { buildServices } from '../../src/app/services.js';
import { startServer } from '../../src/api/server.js';
import { startScanIngestWorker } from '../../src/workers/scan-ingest-worker.js';
import { createParserPool, parseFileInPool } from '../../src/workers/parser-pool.js';
import { assetLabel } from '../../src/domain/scans/finding-copy.js';
import type { Finding } from '../../src/parsers/index.js';
import { generate, parseSize } from '../parsers/generate.js';
import { createBenchDatabase } from '../lib/bench-db.js';

const args = process.argv.slice(2);
const opt = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const size = opt('size', '100MB');
const slice = Number(opt('slice', '2000'));
const useRedis = args.includes('--redis');

let peakRss = 0;
// What the main thread holds at the RSS peak (parser threads' heaps are in rss only).
let atPeak = process.memoryUsage();
// With --gc-sample (and NODE_OPTIONS=--expose-gc), a full collection every second: the largest
// heap left after one is what the main thread really retains, rather than garbage not yet collected.
const gc = args.includes('--gc-sample') ? (globalThis as { gc?: () => void }).gc : undefined;
if (args.includes('--gc-sample') && !gc) throw new Error('--gc-sample needs NODE_OPTIONS=--expose-gc');
let peakLiveHeap = 0;
let ticks = 0;
const rssTimer = setInterval(() => {
  const m = process.memoryUsage();
  if (m.rss > peakRss) {
    peakRss = m.rss;
    atPeak = m;
  }
  if (gc && ++ticks % 10 === 0) {
    gc();
    peakLiveHeap = Math.max(peakLiveHeap, process.memoryUsage().heapUsed);
  }
}, 100);
const mib = (b: number) => `${(b / 1024 ** 2).toFixed(1)} MiB`;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

const file = await generate('nessus', parseSize(size), size.toLowerCase());
const bytes = statSync(file).size;
console.log(`file: ${file} (${mib(bytes)})`);

const db = await createBenchDatabase('bench_ingest');
const storageDir = await mkdtemp(path.join(tmpdir(), 'bench-scans-'));

const config = loadConfig({
  DATABASE_URL: db.url,
  KEY_PEPPER: 'bench-pepper-'.padEnd(48, 'x'),
  REDIS_URL: useRedis ? (process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379') : '',
  PORT: '0',
  LOG_LEVEL: 'silent',
  SCAN_STORAGE_DIR: storageDir,
  PLANS_FILE: new URL('../auth/unlimited-plans.json', import.meta.url).pathname,
});
const logger = createLogger('silent');
const infra = await openInfrastructure(config, logger);
const services = await buildServices(config, infra, logger);
const { firstKey } = await services.workspaces.createWorkspace({
  name: 'bench',
  plan: 'service',
  actor: { actor: 'operator', ip: null, userAgent: null },
  reveal: false,
});
const key = firstKey.secret;
const server = await startServer(services);
const parserPool = createParserPool({ maxThreads: config.parserThreads });
const worker = startScanIngestWorker({ queues: infra.queues, pool: infra.pool, logger, config, parserPool });

// 1. End to end over HTTP.
const idleRss = process.memoryUsage.rss();
peakRss = 0;
const t0 = performance.now();
const res = await fetch(`${server.url}/api/pipeline/scan?name=bench`, {
  method: 'POST',
  headers: { 'x-api-key': key, 'content-type': 'application/xml', 'content-length': String(bytes) },
  body: Readable.toWeb(createReadStream(file)) as never,
  duplex: 'half',
} as RequestInit);
const { scanId } = (await res.json()) as { scanId: string };
const tUploaded = performance.now();
const uploadRss = Math.max(peakRss, process.memoryUsage.rss());
let scan: { status: string; counts: { findings: number; new: number } };
for (;;) {
  scan = (await (
    await fetch(`${server.url}/api/pipeline/scan/${scanId}`, { headers: { 'x-api-key': key } })
  ).json()) as typeof scan;
  if (scan.status === 'completed' || scan.status === 'failed') break;
  await new Promise((r) => setTimeout(r, 100));
}
const tDone = performance.now();
if (scan.status !== 'completed') throw new Error(`scan ${scan.status}`);
const findings = scan.counts.findings;
const e2eRss = peakRss;
const e2eMem = atPeak;
const e2eLiveHeap = peakLiveHeap;

// 2. Parse only.
const p0 = performance.now();
let parsed = 0;
await parseFileInPool(
  parserPool,
  { path: file, format: 'nessus', gzip: false, batchSize: 1000 },
  async (b) => {
    parsed += b.length;
  },
);
const parseMs = performance.now() - p0;

// 3. Parse + COPY into a copy of the findings table (same indexes).
await infra.pool.query(
  `CREATE TABLE bench_copy (LIKE findings INCLUDING ALL, raw_excerpt text, scanner_output text)`,
);
const copyCols = [
  'scan_id',
  'record_index',
  'workspace_id',
  'fingerprint',
  'scanner',
  'rule_id',
  'title',
  'severity',
  'cve_ids',
  'cwe_ids',
  'cvss_score',
  'asset',
  'host',
  'ip',
  'port',
  'protocol',
  'description',
  'raw_excerpt',
  'scanner_output',
];
const csv = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  const s = Array.isArray(v) ? `{${v.join(',')}}` : String(v).replaceAll('\u0000', '');
  return `"${s.replaceAll('"', '""')}"`;
};
/** The values of one `bench_copy` row, in `copyCols` order: shared by the COPY and INSERT baselines. */
const valuesOf = (f: Finding, ws: string): unknown[] => [
  scanId,
  f.recordIndex,
  ws,
  f.fingerprint,
  f.scanner,
  f.ruleId,
  f.title,
  f.severity,
  f.cveIds,
  f.cweIds,
  f.cvssScore,
  assetLabel(f.asset),
  f.asset.host,
  f.asset.ip,
  f.port,
  f.protocol,
  f.description,
  f.rawExcerpt,
  f.evidence,
];
const rowOf = (f: Finding, ws: string) => valuesOf(f, ws).map(csv).join(',') + '\n';
const wsId = (await infra.pool.query<{ id: string }>(`SELECT id FROM workspaces LIMIT 1`)).rows[0]!.id;
const c0 = performance.now();
const client = await infra.pool.connect();
const copy = client.query(copyFrom(`COPY bench_copy (${copyCols.join(',')}) FROM STDIN WITH (FORMAT csv)`));
const rows = new Readable({ read() {} });
const copied = pipeline(rows, copy);
await parseFileInPool(
  parserPool,
  { path: file, format: 'nessus', gzip: false, batchSize: 1000 },
  async (b) => {
    if (!rows.push(b.map((f) => rowOf(f, wsId)).join(''))) await new Promise((r) => setTimeout(r, 0));
  },
);
rows.push(null);
await copied;
client.release();
const copyMs = performance.now() - c0;

// 4. One INSERT per row, on a slice.
const slicePool = new pg.Pool({ connectionString: db.url, max: 1 });
const some: Finding[] = [];
await parseFileInPool(
  parserPool,
  { path: file, format: 'nessus', gzip: false, batchSize: 1000 },
  async (b) => {
    for (const f of b) if (some.length < slice) some.push(f);
    if (some.length >= slice) throw new Error('enough');
  },
).catch((e: Error) => {
  if (e.message !== 'enough') throw e;
});
await infra.pool.query(`TRUNCATE bench_copy`);
const r0 = performance.now();
for (const f of some) {
  await slicePool.query(
    `INSERT INTO bench_copy (${copyCols.join(', ')}) VALUES (${copyCols.map((_, i) => `$${i + 1}`).join(', ')})`,
    valuesOf(f, wsId).map((v) => (typeof v === 'string' ? v.replaceAll('\u0000', '') : v)),
  );
}
const perRowMs = performance.now() - r0;
await slicePool.end();

clearInterval(rssTimer);
const e2eMs = tDone - t0;
const perRowRate = some.length / (perRowMs / 1000);
console.log(
  `\nqueue backend: ${infra.queues.kind}; parser threads: ${config.parserThreads}; findings: ${findings} (parse-only count ${parsed})`,
);
console.log('| step | time | findings/s | MB/s |');
console.log('|---|---|---|---|');
console.log(
  `| upload (HTTP, stored + hashed) | ${secs(tUploaded - t0)} | | ${(bytes / 1024 ** 2 / ((tUploaded - t0) / 1000)).toFixed(1)} |`,
);
console.log(
  `| **upload → completed (end to end)** | **${secs(e2eMs)}** | **${Math.round(findings / (e2eMs / 1000))}** | ${(bytes / 1024 ** 2 / (e2eMs / 1000)).toFixed(1)} |`,
);
console.log(
  `| parse → completed (worker part) | ${secs(tDone - tUploaded)} | ${Math.round(findings / ((tDone - tUploaded) / 1000))} | |`,
);
console.log(
  `| baseline: parse only | ${secs(parseMs)} | ${Math.round(parsed / (parseMs / 1000))} | ${(bytes / 1024 ** 2 / (parseMs / 1000)).toFixed(1)} |`,
);
console.log(
  `| baseline: parse + COPY (no dedupe, no cases/evidence) | ${secs(copyMs)} | ${Math.round(parsed / (copyMs / 1000))} | |`,
);
console.log(
  `| baseline: one INSERT per row (${some.length} rows, extrapolated) | ${secs((findings / perRowRate) * 1000)} | ${Math.round(perRowRate)} | |`,
);
console.log(
  `RSS of the process (server + worker + 2 parser threads, tsx): ${mib(idleRss)} before the upload, peak ${mib(uploadRss)} by the end of the upload, peak ${mib(e2eRss)} by completion`,
);
console.log(
  `main thread at the RSS peak: heapUsed ${mib(e2eMem.heapUsed)}, heapTotal ${mib(e2eMem.heapTotal)}, external ${mib(e2eMem.external)} (arrayBuffers ${mib(e2eMem.arrayBuffers)}); the rest of RSS is code, parser threads and freed pages`,
);
if (gc) console.log(`main thread heap after a full GC, largest during ingestion: ${mib(e2eLiveHeap)}`);

await worker.close();
await parserPool.destroy();
await server.close();
await services.stop();
await infra.close();
await rm(storageDir, { recursive: true, force: true });
await db.drop();
