/**
 * Batch triage throughput (docs/triage.md#batch-triage): items per second from `POST /api/v1/triage/batch` to
 * `completed`, with the local engine, on each queue backend. Baseline in the same run: the
 * same items through the triage service directly (no queue, same concurrency), so the
 * ratio is what the queue and the per-item bookkeeping cost.
 *
 *   npx tsx bench/triage/batch-throughput.ts [--items 2000] [--concurrency 32] [--no-redis] [--only redis|postgres] [--no-direct]
 */
import { createBenchDatabase } from '../lib/bench-db.js';
import { loadConfig } from '../../src/lib/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { openInfrastructure } from '../../src/app/infrastructure.js';
import { buildServices } from '../../src/app/services.js';
import { buildApp } from '../../src/api/app.js';
import { startTriageWorker } from '../../src/workers/triage-worker.js';

const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1]! : d);
const items = Number(opt('items', '2000'));
const concurrency = Number(opt('concurrency', '32'));
const redisUrl = args.includes('--no-redis')
  ? null
  : (process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379');

const item = (i: number) =>
  i % 3 === 0
    ? { cveIds: ['CVE-2021-44228'], title: `Log4Shell ${i}`, severity: 'CRITICAL', cvssScore: 10 }
    : { title: `Finding ${i}`, severity: 'MEDIUM', description: `Outdated package ${i} on an internal host` };

async function run(backend: 'postgres' | 'redis') {
  const db = await createBenchDatabase(`bench_batch_${backend}`);
  const config = loadConfig({
    DATABASE_URL: db.url,
    KEY_PEPPER: 'bench-pepper-'.padEnd(48, 'x'),
    REDIS_URL: backend === 'redis' ? redisUrl! : '',
    LOG_LEVEL: 'silent',
    PLANS_FILE: new URL('../auth/unlimited-plans.json', import.meta.url).pathname,
  });
  const logger = createLogger('silent');
  const infra = await openInfrastructure(config, logger, {
    queueNamespace: `bench${Date.now().toString(36)}`,
  });
  const services = await buildServices(config, infra, logger);
  const app = await buildApp(services);
  const { workspace, firstKey } = await services.workspaces.createWorkspace({
    name: 'bench',
    plan: 'service',
    actor: { actor: 'operator', ip: null, userAgent: null },
    reveal: false,
  });

  // Baseline: the service directly, `concurrency` at a time.
  const caller = {
    workspaceId: workspace.id,
    keyId: firstKey.key.id,
    requestId: 'bench',
    aiCallLimit: 1_000_000,
  };
  let next = args.includes('--no-direct') ? items : 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < items; i = next++)
        await services.triage.triageOne({ ...caller, requestId: `b${i}` }, item(i) as never);
    }),
  );
  const direct = items / ((performance.now() - t0) / 1000);

  const worker = startTriageWorker(
    infra.queues,
    {
      db: infra.pool,
      triage: services.triage,
      pepper: infra.pepper,
      clock: () => new Date(),
    },
    { concurrency, logger },
  );
  const t1 = performance.now();
  const ids: string[] = [];
  for (let start = 0; start < items; start += 1000) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/triage/batch',
      headers: { 'x-api-key': firstKey.secret },
      payload: { items: Array.from({ length: Math.min(1000, items - start) }, (_, i) => item(start + i)) },
    });
    if (res.statusCode !== 202) throw new Error(res.body);
    ids.push(res.json().batchId);
  }
  for (;;) {
    const r = await infra.pool.query(
      `SELECT count(*) FILTER (WHERE finished_at IS NULL)::int AS open FROM triage_batches WHERE id = ANY($1)`,
      [ids],
    );
    if (r.rows[0].open === 0) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  const batched = items / ((performance.now() - t1) / 1000);
  await worker.close();
  await app.close();
  await services.stop();
  await infra.close();
  await db.drop();
  return {
    backend,
    items,
    concurrency,
    'direct items/s': Math.round(direct),
    'batch items/s': Math.round(batched),
    ratio: +(batched / direct).toFixed(2),
  };
}

const only = opt('only', '');
const rows = [];
if (only !== 'redis') rows.push(await run('postgres'));
if (redisUrl && only !== 'postgres') rows.push(await run('redis'));
console.log('\nbatch triage throughput, local engine');
console.table(rows);
