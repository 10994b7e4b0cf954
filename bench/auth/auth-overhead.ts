/**
 * Cost of API-key auth: autocannon at fixed concurrency against GET /healthz (no auth, the
 * baseline) and GET /api/v1/keys/me (auth from the cache + rate limit + metering), in the
 * same run, interleaved, on real HTTP. Also the in-process cost of one cached key check.
 *
 *   npx tsx bench/auth/auth-overhead.ts [--seconds 5] [--connections 10] [--redis]
 *
 * Needs PostgreSQL (BENCH_DATABASE_URL, default the machine's on 127.0.0.1:5432).
 */
import autocannon from 'autocannon';
import { createBenchDatabase } from '../lib/bench-db.js';
import { startServerProcess } from '../../test/helpers/server-process.js';
import { loadConfig } from '../../src/lib/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { openInfrastructure } from '../../src/app/infrastructure.js';
import { buildServices } from '../../src/app/services.js';

const args = process.argv.slice(2);
const opt = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const seconds = Number(opt('seconds', '5'));
const connections = Number(opt('connections', '10'));
const useRedis = args.includes('--redis');

const db = await createBenchDatabase('bench_auth');

const config = loadConfig({
  DATABASE_URL: db.url,
  KEY_PEPPER: 'bench-pepper-'.padEnd(48, 'x'),
  REDIS_URL: useRedis ? (process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379') : '',
  PORT: '0',
  LOG_LEVEL: 'silent',
  PLANS_FILE: new URL('./unlimited-plans.json', import.meta.url).pathname,
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

// The server runs in its own process, so the load generator does not share its event loop.
const proc = await startServerProcess('web', {
  DATABASE_URL: config.databaseUrl!,
  KEY_PEPPER: config.keyPepper!,
  REDIS_URL: config.redisUrl ?? '',
  LOG_LEVEL: 'silent',
  PLANS_FILE: new URL('./unlimited-plans.json', import.meta.url).pathname,
});
const server = { url: proc.url, close: () => proc.stop('SIGTERM') };

async function load(path: string, headers: Record<string, string> = {}) {
  const r = await autocannon({ url: `${server.url}${path}`, connections, duration: seconds, headers });
  if (r.non2xx > 0) throw new Error(`${path}: ${r.non2xx} non-2xx answers`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

// Warm up both routes (JIT, key cache), then interleave two rounds each.
await load('/healthz');
await load('/api/v1/keys/me', { 'x-api-key': key });
const rows: { route: string; rps: number; p50: number; p99: number }[] = [];
for (let round = 0; round < 2; round++) {
  rows.push({ route: 'GET /healthz', ...(await load('/healthz')) });
  rows.push({ route: 'GET /api/v1/keys/me', ...(await load('/api/v1/keys/me', { 'x-api-key': key })) });
}

// In-process: a cached verify, against the cost of an empty async call.
const N = 200_000;
await services.verifier.verify(key);
let t0 = process.hrtime.bigint();
for (let i = 0; i < N; i++) await services.verifier.verify(key);
const verifyNs = Number(process.hrtime.bigint() - t0) / N;
t0 = process.hrtime.bigint();
for (let i = 0; i < N; i++) await Promise.resolve(i);
const baseNs = Number(process.hrtime.bigint() - t0) / N;

console.log(
  `\nauth overhead — ${connections} connections, ${seconds}s per run, rate limits on ${useRedis ? 'Redis' : 'PostgreSQL'}`,
);
console.table(rows);
const avg = (route: string, f: 'rps' | 'p50' | 'p99') =>
  rows.filter((r) => r.route === route).reduce((s, r) => s + r[f], 0) / 2;
console.log(
  `ratio rps keys/me ÷ healthz: ${(avg('GET /api/v1/keys/me', 'rps') / avg('GET /healthz', 'rps')).toFixed(3)}; ` +
    `p50 added: ${(avg('GET /api/v1/keys/me', 'p50') - avg('GET /healthz', 'p50')).toFixed(2)} ms`,
);
console.log(
  `cached key check in process: ${(verifyNs / 1000).toFixed(2)} µs per call (empty await: ${(baseNs / 1000).toFixed(2)} µs)`,
);

await server.close();
await services.stop();
await infra.close();
await db.drop();
