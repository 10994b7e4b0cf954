/**
 * Triage overhead over HTTP (issues 3 and 17): `POST /api/v1/triage` at fixed request rates, the
 * server in its own process, against (a) the local engine, (b) a fake OpenAI-compatible provider
 * that answers at once, (c) the same fake answering after a fixed 50 ms, and (d) (c) with a quota
 * reservation before every provider call (`AI_CALL_LEASE_MAX=1`, what leases save). The fakes
 * run in a child process of their own, so neither the server nor the load shares their event loop.
 *
 * The load is open-loop and evenly paced (one request every 1/rate seconds, whatever the answers
 * do): autocannon's `overallRate` sends each second's requests in a burst, which measures the
 * burst's queue rather than the service. Before the paced rates, each engine answers
 * `--sequential` requests one at a time (closed loop, one client).
 *
 * Reported per row: the rate reached, p50/p99, the provider's time as the fake measured it
 * (request in to last byte out), the overhead (p50 − the provider's p50, p99 − the provider's
 * p50), the answers that were not 200, the requests billed (distinct request ids written to
 * `usage_ledger` during the row, which must equal the 200 answers), and the CPU a request cost
 * the server process, the PostgreSQL backends of its database and this process (the client),
 * read from /proc, in µs.
 *
 * In the same run, as the floor, `GET /healthz` on the same server at the same rates and one at a
 * time: what the HTTP stack, the loopback and this VM's wake-ups cost before the service does
 * anything. The load average is printed with the table: figures from a loaded machine are not
 * comparable with idle ones.
 *
 *   npx tsx bench/triage/http-overhead.ts [--seconds 8] [--rates 50,150] [--sequential 500]
 *     [--engines local,instant,slow,reservation]
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createBenchDatabase } from '../lib/bench-db.js';
import { paced as pacedLoad } from '../lib/paced-load.js';
import { signUpOverHttp, startServerProcess } from '../../test/helpers/server-process.js';

const PROVIDER_MS = 50;

if (process.argv.includes('--serve-fakes')) {
  // The child: two fakes (instant, 50 ms); answers the served times of the requests since a mark.
  const { startOpenAiFake } = await import('../../test/helpers/fake-providers/openai-fake.js');
  const fakes = {
    instant: await startOpenAiFake(),
    slow: await startOpenAiFake([{ kind: 'slow', delayMs: PROVIDER_MS, then: { kind: 'success' } }]),
  };
  process.on('message', (m: { which: 'instant' | 'slow'; since: number }) => {
    const requests = fakes[m.which].requests;
    process.send!({ count: requests.length, served: requests.slice(m.since).map((q) => q.servedMs ?? 0) });
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ instant: fakes.instant.url, slow: fakes.slow.url });
} else {
  await main();
}

/** The --help text (a function: hoisted above the top-level `await main()`). */
function usage(): string {
  return `Triage overhead over HTTP: POST /api/v1/triage at fixed open-loop rates, the server in its
own process, against GET /healthz on the same server at the same rates (the floor).

  npx tsx bench/triage/http-overhead.ts [--seconds 8] [--rates 50,150] [--sequential 500]
    [--engines local,instant,slow,reservation]

  --seconds N      length of each paced row (default 8)
  --rates a,b      open-loop rates in requests a second, evenly paced (default 50,150)
  --sequential N   requests one at a time per engine before the paced rows; 0 skips them (default 500)
  --engines list   local: the local SSVC engine; instant: a fake OpenAI-compatible provider that
                   answers at once; slow: the same fake after 50 ms; reservation: slow with a quota
                   reservation before every call (AI_CALL_LEASE_MAX=1) (default: all four)

The speed targets (1,000 and 500 requests a second), with the instant fake provider (run on an idle machine; prints the load average):
  1,000 and 500 requests a second, open loop, plus the sequential overhead:
    npx tsx bench/triage/http-overhead.ts --engines instant --rates 500,1000 --seconds 10 --sequential 1000
  a 5-second smoke run:
    npx tsx bench/triage/http-overhead.ts --engines instant --rates 100 --seconds 5 --sequential 100

Columns: rate reached, 200s and not-200s, requests billed (distinct ledger request ids: must equal the
200s), p50/p99, the provider's p50 as the fake measured it, overhead (p50 and p99 minus the provider's
p50), and CPU a request of the server process, its PostgreSQL backends and this client (µs).`;
}

async function main() {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(usage());
    return;
  }
  const opt = (n: string, d: string) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1]! : d);
  const seconds = Number(opt('seconds', '8'));
  const rates = opt('rates', '50,150').split(',').map(Number);
  const sequential = Number(opt('sequential', '500'));
  const engines = opt('engines', 'local,instant,slow,reservation').split(',');

  const child = fork(fileURLToPath(import.meta.url), ['--serve-fakes'], { execArgv: ['--import', 'tsx'] });
  const fakeUrls = await new Promise<{ instant: string; slow: string }>((r) =>
    child.once('message', (m) => r(m as { instant: string; slow: string })),
  );
  /** The fake's request count now, and the served times (ms) of its requests since `since`. */
  const fakeServed = (which: 'instant' | 'slow', since: number) =>
    new Promise<{ count: number; served: number[] }>((r) => {
      child.once('message', (m) => r(m as { count: number; served: number[] }));
      child.send({ which, since });
    });

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

  const TICK_US = 1e6 / 100; // /proc/<pid>/stat counts clock ticks (USER_HZ = 100)
  const procCpuUs = (pid: number) => {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(f[11]) + Number(f[12])) * TICK_US; // utime, stime
    } catch {
      return 0; // the backend has gone
    }
  };

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
    const client = new pg.Client(db.url);
    await client.connect();
    const dbName = new URL(db.url).pathname.slice(1);
    return {
      base: proc.url,
      key,
      /** Distinct requests billed so far. */
      async billed(): Promise<number> {
        const r = await client.query<{ n: string }>(
          'SELECT count(DISTINCT request_id) AS n FROM usage_ledger',
        );
        return Number(r.rows[0]!.n);
      },
      /** CPU so far (µs): the server process, its database's backends (by pid), this process. */
      async cpu(): Promise<{ server: number; pg: Map<number, number>; client: number }> {
        const r = await client.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [dbName],
        );
        const u = process.cpuUsage();
        return {
          server: procCpuUs(proc.child.pid!),
          pg: new Map(r.rows.map((x) => [x.pid, procCpuUs(x.pid)])),
          client: u.user + u.system,
        };
      },
      async stop() {
        await client.end();
        await proc.stop('SIGTERM');
        await db.drop();
      },
    };
  }
  type Server = Awaited<ReturnType<typeof server>>;

  const body = JSON.stringify({
    title: 'Outdated OpenSSL on an internal host',
    severity: 'MEDIUM',
    description: 'OpenSSL 1.1.1 reached end of life',
  });
  const init = (s: Server, method: 'POST' | 'GET'): RequestInit =>
    method === 'POST'
      ? { method, headers: { 'x-api-key': s.key, 'content-type': 'application/json' }, body }
      : {};

  /** One request at a time over HTTP, as `paced` reports it. */
  async function oneAtATime(url: string, request: RequestInit, n: number) {
    const latencies: number[] = [];
    let failures = 0;
    const start = performance.now();
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      const res = await fetch(url, request);
      await res.arrayBuffer();
      if (res.status === 200) latencies.push(performance.now() - t);
      else failures++;
    }
    latencies.sort((a, b) => a - b);
    const q = (p: number) => +(latencies[Math.floor(p * latencies.length)] ?? NaN).toFixed(2);
    const reached = +(latencies.length / ((performance.now() - start) / 1000)).toFixed(1);
    return { latencies, failures, reached, p50: q(0.5), p99: q(0.99) };
  }

  const rows: Record<string, string | number>[] = [];
  /** Runs `load` and adds its row: latencies, provider time, billing and CPU per request. */
  async function measure(
    s: Server,
    engine: string,
    target: string | number,
    fake: 'instant' | 'slow' | null,
    triage: boolean,
    load: () => Promise<{ failures: number; reached: number; p50: number; p99: number; latencies: number[] }>,
  ) {
    const since = fake ? (await fakeServed(fake, 0)).count : 0;
    const billedBefore = triage ? await s.billed() : 0;
    const before = await s.cpu();
    const r = await load();
    const after = await s.cpu();
    const answered = r.latencies.length;
    let pgUs = 0;
    for (const [pid, us] of after.pg) pgUs += us - (before.pg.get(pid) ?? 0);
    const served = fake ? (await fakeServed(fake, since)).served.sort((a, b) => a - b) : [];
    const provider = served.length === 0 ? 0 : served[Math.floor(served.length / 2)]!;
    const per = (us: number) => (answered === 0 ? NaN : Math.round(us / answered));
    rows.push({
      engine,
      'target rps': target,
      'reached rps': r.reached,
      'not 200': r.failures,
      billed: triage ? (await s.billed()) - billedBefore : '—',
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'provider p50 ms': +provider.toFixed(2),
      'overhead p50': +(r.p50 - provider).toFixed(2),
      'overhead p99': +(r.p99 - provider).toFixed(2),
      'server µs/req': per(after.server - before.server),
      'pg µs/req': per(pgUs),
      'client µs/req': per(after.client - before.client),
    });
  }

  const all = [
    ['local', 'local engine', {}, null],
    [
      'instant',
      'fake provider, instant',
      { OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: `${fakeUrls.instant}/v1` },
      'instant',
    ],
    [
      'slow',
      `fake provider, ${PROVIDER_MS} ms`,
      { OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: `${fakeUrls.slow}/v1` },
      'slow',
    ],
    // The baseline for AI-call leases: a reservation (a round trip) before every provider call.
    [
      'reservation',
      `fake provider, ${PROVIDER_MS} ms, a reservation per request`,
      { OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: `${fakeUrls.slow}/v1`, AI_CALL_LEASE_MAX: '1' },
      'slow',
    ],
  ] as const;
  let floorDone = false;
  for (const [id, engine, env, fake] of all) {
    if (!engines.includes(id)) continue;
    const s = await server(env);
    const triageUrl = `${s.base}/api/v1/triage`;
    await pacedLoad(triageUrl, init(s, 'POST'), 50, 2); // warm-up
    await oneAtATime(`${s.base}/healthz`, {}, 200);
    if (!floorDone) {
      // The floor, in the same run: the same server, client and pacing, a route that does nothing.
      if (sequential > 0)
        await measure(s, 'GET /healthz (floor)', 'one at a time', null, false, () =>
          oneAtATime(`${s.base}/healthz`, {}, sequential),
        );
      for (const rate of rates)
        await measure(s, 'GET /healthz (floor)', rate, null, false, () =>
          pacedLoad(`${s.base}/healthz`, {}, rate, seconds),
        );
      floorDone = true;
    }
    if (sequential > 0)
      await measure(s, engine, 'one at a time', fake, true, () =>
        oneAtATime(triageUrl, init(s, 'POST'), sequential),
      );
    for (const rate of rates)
      await measure(s, engine, rate, fake, true, () => pacedLoad(triageUrl, init(s, 'POST'), rate, seconds));
    await s.stop();
  }
  child.disconnect();
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`\ntriage over HTTP (server in its own process, Redis for limits), load average ${load}`);
  console.table(rows);
}
