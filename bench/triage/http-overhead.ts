/**
 * Triage overhead over HTTP (issue 3): `POST /api/v1/triage` at fixed request rates, the server
 * in its own process, against (a) the local engine and (b) a fake OpenAI-compatible provider on
 * 127.0.0.1 that answers after a fixed 50 ms. Reports p50/p99 of response time, of response time
 * minus the provider's fixed latency, and the rate reached.
 *
 * The load is open-loop and evenly paced (one request every 1/rate seconds, whatever the answers
 * do): autocannon's `overallRate` sends each second's requests in a burst, which measures the
 * burst's queue rather than the service.
 *
 * The provider's time is what the fake measured for the requests of the run (request in to last
 * byte out; its 50 ms timer fires late under load), so the overhead columns are the service's
 * own: p50 − the provider's p50, and p99 − the provider's p50 (provider jitter counted as ours).
 *
 * In the same run, as the floor, `GET /healthz` on the same server at the same rates: what the
 * HTTP stack, the loopback and this VM's wake-ups cost before the service does anything; and the
 * fake provider again with `AI_CALL_LEASE_MAX=1`, a quota reservation before every provider call
 * (what leases save).
 *
 *   npx tsx bench/triage/http-overhead.ts [--seconds 8] [--rates 50,150]
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createBenchDatabase } from '../lib/bench-db.js';
import { paced as pacedLoad } from '../lib/paced-load.js';
import { startOpenAiFake } from '../../test/helpers/fake-providers/openai-fake.js';
import { signUpOverHttp, startServerProcess } from '../../test/helpers/server-process.js';

const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1]! : d);
const seconds = Number(opt('seconds', '8'));
const rates = opt('rates', '50,150').split(',').map(Number);
const PROVIDER_MS = 50;

const fake = await startOpenAiFake([{ kind: 'slow', delayMs: PROVIDER_MS, then: { kind: 'success' } }]);
const dir = mkdtempSync(path.join(tmpdir(), 'bench-triage-'));
const triageConfig = JSON.parse(readFileSync('config/triage.json', 'utf8'));
for (const p of Object.values(triageConfig.providers) as {
  requestsPerMinute: number;
  tokensPerMinute: number;
}[]) {
  p.requestsPerMinute = 1_000_000;
  p.tokensPerMinute = 1_000_000_000;
}
writeFileSync(path.join(dir, 'triage.json'), JSON.stringify(triageConfig));

async function server(env: Record<string, string>) {
  const db = await createBenchDatabase('bench_http');
  const proc = await startServerProcess('web', {
    DATABASE_URL: db.url,
    KEY_PEPPER: 'bench-pepper-'.padEnd(48, 'x'),
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    LOG_LEVEL: 'silent',
    PLANS_FILE: path.resolve('bench/auth/unlimited-plans.json'),
    TRIAGE_CONFIG_FILE: path.join(dir, 'triage.json'),
    ...env,
  });
  const { key } = await signUpOverHttp(proc.url);
  return {
    base: proc.url,
    key,
    async stop() {
      await proc.stop('SIGTERM');
      await db.drop();
    },
  };
}

/** `rate` requests a second for `secs`, evenly spaced (`bench/lib/paced-load.ts`). */
const paced = (url: string, key: string, rate: number, secs: number, method: 'POST' | 'GET' = 'POST') =>
  pacedLoad(
    url,
    method === 'POST'
      ? { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body }
      : {},
    rate,
    secs,
  );

const body = JSON.stringify({
  title: 'Outdated OpenSSL on an internal host',
  severity: 'MEDIUM',
  description: 'OpenSSL 1.1.1 reached end of life',
});
const rows: Record<string, string | number>[] = [];
for (const [engine, env, providerMs] of [
  ['local engine', {}, 0],
  ['fake provider, 50 ms', { OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: `${fake.url}/v1` }, PROVIDER_MS],
  // The baseline for AI-call leases: a reservation (a round trip) before every provider call.
  [
    'fake provider, 50 ms, a reservation per request',
    { OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: `${fake.url}/v1`, AI_CALL_LEASE_MAX: '1' },
    PROVIDER_MS,
  ],
] as const) {
  const s = await server(env);
  await paced(`${s.base}/api/v1/triage`, s.key, 50, 2); // warm-up
  if (providerMs === 0) {
    // The floor, in the same run: the same server, client and pacing, a route that does nothing.
    for (const rate of rates) {
      const r = await paced(`${s.base}/healthz`, s.key, rate, seconds, 'GET');
      rows.push({
        engine: 'GET /healthz (floor)',
        'target rps': rate,
        'reached rps': r.reached,
        errors: r.failures,
        'p50 ms': r.p50,
        'p99 ms': r.p99,
        'provider p50 ms': 0,
        'p50 − provider': r.p50,
        'p99 − provider': r.p99,
      });
    }
  }
  for (const rate of rates) {
    const seen = fake.requests.length;
    const r = await paced(`${s.base}/api/v1/triage`, s.key, rate, seconds);
    // The provider's time as the fake itself measured it (its timer fires a little late, more
    // so under load); the nominal 50 ms when the engine is local (0).
    const served = fake.requests
      .slice(seen)
      .map((q) => q.servedMs ?? providerMs)
      .sort((a, b) => a - b);
    const provider =
      providerMs === 0 || served.length === 0 ? providerMs : served[Math.floor(served.length / 2)]!;
    rows.push({
      engine,
      'target rps': rate,
      'reached rps': r.reached,
      errors: r.failures,
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'provider p50 ms': +provider.toFixed(2),
      'p50 − provider': +(r.p50 - provider).toFixed(2),
      'p99 − provider': +(r.p99 - provider).toFixed(2),
    });
  }
  await s.stop();
}
await fake.close();
console.log('\ntriage over HTTP at fixed rates (server in its own process, Redis for limits)');
console.table(rows);
