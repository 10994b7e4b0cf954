/**
 * Case triage throughput (docs/cases.md#case-triage): cases per second from a completed 10,000-case scan whose
 * triage starts (`triageScan`: choose the cases, reserve their AI calls, build their requests,
 * store the batch, enqueue) to its batch finished with every answer stored as its case's triage,
 * local engine, BullMQ worker on the `triage` queue. Baseline in the same run: the same requests
 * as plain batch items (`POST /api/v1/triage/batch`, 1,000 a batch) through the same worker, so
 * the ratio is what the case bookkeeping costs.
 *
 *   npx tsx bench/cases/case-triage.ts [--cases 10000] [--concurrency 32] [--only redis|postgres] [--no-baseline]
 */
import { createBenchDatabase } from '../lib/bench-db.js';
import { loadConfig } from '../../src/lib/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { openInfrastructure } from '../../src/app/infrastructure.js';
import { buildServices } from '../../src/app/services.js';
import { buildApp } from '../../src/api/app.js';
import { startTriageWorker } from '../../src/workers/triage-worker.js';
import { startScanIngestWorker } from '../../src/workers/scan-ingest-worker.js';
import { caseRequestSources } from '../../src/domain/cases/case-triage-source.js';
import { caseTriageRequest } from '../../src/domain/triage/case-triage-request.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, loadavg } from 'node:os';
import path from 'node:path';

const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1]! : d);
const cases = Number(opt('cases', '10000'));
const concurrency = Number(opt('concurrency', '32'));
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A CLI JSON Lines scan of `n` distinct findings (distinct locations: one case each). */
function scanFile(n: number): Buffer {
  const lines = [JSON.stringify({ tool: { name: 'bench-scanner', version: '1.0' } })];
  for (let i = 0; i < n; i++) {
    lines.push(
      JSON.stringify(
        i % 3 === 0
          ? {
              title: `Log4Shell ${i}`,
              severity: 'CRITICAL',
              cveIds: ['CVE-2021-44228'],
              location: `lib/a${i}.jar`,
            }
          : {
              title: `Outdated package ${i}`,
              severity: i % 2 ? 'MEDIUM' : 'LOW',
              cveIds: [],
              description: `Outdated package ${i} on an internal host`,
              location: `src/m${i}.ts:${i % 400}`,
            },
      ),
    );
  }
  return Buffer.from(lines.join('\n'));
}

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 25));
}

async function run(backend: 'postgres' | 'redis') {
  const db = await createBenchDatabase(`bench_cases_${backend}`);
  const storageDir = await mkdtemp(path.join(tmpdir(), 'bench-scans-'));
  const config = loadConfig({
    DATABASE_URL: db.url,
    KEY_PEPPER: 'bench-pepper-'.padEnd(48, 'x'),
    REDIS_URL: backend === 'redis' ? redisUrl : '',
    LOG_LEVEL: 'silent',
    SCAN_STORAGE_DIR: storageDir,
    PLANS_FILE: new URL('../auth/unlimited-plans.json', import.meta.url).pathname,
  });
  const logger = createLogger('silent');
  const infra = await openInfrastructure(config, logger, {
    queueNamespace: `bench${Date.now().toString(36)}`,
  });
  const services = await buildServices(config, infra, logger);
  const app = await buildApp(services);
  const { firstKey } = await services.workspaces.createWorkspace({
    name: 'bench',
    plan: 'service',
    actor: { actor: 'operator', ip: null, userAgent: null },
    reveal: false,
  });
  const key = firstKey.secret;

  // The scan, ingested without triage: what is timed starts when its triage does.
  const ingest = startScanIngestWorker({
    queues: infra.queues,
    pool: infra.pool,
    logger,
    config,
    storage: services.scans.storage,
  });
  const up = await app.inject({
    method: 'POST',
    url: '/api/pipeline/scan?name=bench&asset=bench-app',
    headers: { 'x-api-key': key, 'content-type': 'application/x-ndjson' },
    payload: scanFile(cases),
  });
  if (up.statusCode !== 202) throw new Error(up.body);
  const scanId = up.json().scanId as string;
  await until(async () => {
    const r = await infra.pool.query(`SELECT status, new_cases FROM scans WHERE id = $1`, [scanId]);
    if (r.rows[0].status === 'failed') throw new Error('scan failed');
    return r.rows[0].status === 'completed';
  });
  await ingest.close();
  const { rows } = await infra.pool.query<{ n: number }>(`SELECT new_cases AS n FROM scans WHERE id = $1`, [
    scanId,
  ]);
  if (rows[0]!.n !== cases) throw new Error(`expected ${cases} cases, got ${rows[0]!.n}`);

  const worker = startTriageWorker(
    infra.queues,
    { db: infra.pool, triage: services.triage, pepper: infra.pepper, clock: () => new Date() },
    { concurrency, logger },
  );
  await infra.pool.query(`UPDATE scans SET triage = 'all' WHERE id = $1`, [scanId]);
  const load0 = loadavg()[0]!;
  const t0 = performance.now();
  await services.caseTriage.triageScan(scanId);
  const accepted = performance.now() - t0;
  await until(async () => {
    const r = await infra.pool.query(`SELECT finished_at FROM triage_batches WHERE id = $1`, [scanId]);
    return r.rows[0]?.finished_at != null;
  });
  const caseRate = cases / ((performance.now() - t0) / 1000);
  const check = await infra.pool.query<{ triaged: number; history: number }>(
    `SELECT (SELECT count(*) FROM cases WHERE triaged_at IS NOT NULL)::int AS triaged,
            (SELECT count(*) FROM case_triage_history)::int AS history`,
  );
  if (check.rows[0]!.triaged !== cases || check.rows[0]!.history !== cases)
    throw new Error(`not every case was triaged: ${JSON.stringify(check.rows[0])}`);

  // Baseline: the same requests as plain batch items, through the same worker.
  let batchRate = NaN;
  if (!args.includes('--no-baseline')) {
    const { rows: ids } = await infra.pool.query<{ id: string }>(`SELECT id FROM cases ORDER BY seq`);
    const sources = await caseRequestSources(
      infra.pool,
      firstKey.key.workspaceId,
      ids.map((r) => r.id),
      scanId,
    );
    const requests = sources.map(caseTriageRequest);
    const t1 = performance.now();
    const batchIds: string[] = [];
    for (let start = 0; start < requests.length; start += 1000) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/triage/batch',
        headers: { 'x-api-key': key },
        payload: { items: requests.slice(start, start + 1000) },
      });
      if (res.statusCode !== 202) throw new Error(res.body);
      batchIds.push(res.json().batchId);
    }
    await until(async () => {
      const r = await infra.pool.query(
        `SELECT count(*) FILTER (WHERE finished_at IS NULL)::int AS open FROM triage_batches WHERE id = ANY($1)`,
        [batchIds],
      );
      return r.rows[0].open === 0;
    });
    batchRate = requests.length / ((performance.now() - t1) / 1000);
  }
  const load1 = loadavg()[0]!;
  await worker.close();
  await app.close();
  await services.stop();
  await infra.close();
  await db.drop();
  await rm(storageDir, { recursive: true, force: true });
  return {
    backend,
    cases,
    concurrency,
    'accept ms': Math.round(accepted),
    'case triage cases/s': Math.round(caseRate),
    'batch items/s (baseline)': Math.round(batchRate),
    ratio: +(caseRate / batchRate).toFixed(2),
    'load avg (1 min) before→after': `${load0.toFixed(2)}→${load1.toFixed(2)}`,
  };
}

const only = opt('only', '');
const results = [];
if (only !== 'postgres') results.push(await run('redis'));
if (only !== 'redis') results.push(await run('postgres'));
console.log('\ncase triage of a scan, local engine');
console.table(results);
