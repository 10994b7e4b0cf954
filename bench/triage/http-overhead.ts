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
 * A second table gives what a request costs whatever the load: CPU, wake-ups (voluntary context
 * switches of the server's main thread and of the PostgreSQL backends), the statements and Redis
 * commands the server sent, the connections it opened and its garbage collection, counted by
 * `server-probe.ts` loaded into each server process; then each row's statements by kind with
 * their times in flight, and what the processes cost idle. `--web 2` runs two `web` processes
 * (the Procfile's scale-out) on one database and Redis prefix, the load sent to them in turn.
 *
 *   npx tsx bench/triage/http-overhead.ts [--seconds 8] [--rates 50,150] [--sequential 500]
 *     [--engines local,instant,slow,reservation] [--web 1] [--loop-delay] [--compiled]
 *     [--server-node-args "--max-semi-space-size=64"] [--variants "procfile;"] [--trace]
 *     [--server-output DIR]
 *
 * `--trace` prints, per paced row, where the slowest 1% of requests waited (`tail-attribution.ts`):
 * each request's phases from the client's clock and the server's, and what overlapped them on the
 * server (GC pauses, statements in flight by kind, a pool with no idle connection).
 *
 * The server runs with the node options of the Procfile's `web` line, as deployed; `--variants`
 * measures several configurations in one run, their rows alternated.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createBenchDatabase } from '../lib/bench-db.js';
import { procfileNodeArgs } from '../lib/procfile.js';
import { closeClient, paced as pacedLoad, send, type SentRequest } from '../lib/paced-load.js';
import { watchStalls, type Span } from './request-trace.js';
import { attribute, type ServerTrace } from './tail-attribution.js';
import { signUpOverHttp, startServerProcess, type ServerProcess } from '../../test/helpers/server-process.js';

const PROVIDER_MS = 50;
/** Loaded into each server process before the app: its counters (see server-probe.ts). */
const PROBE = fileURLToPath(new URL('./server-probe.ts', import.meta.url));

/** A server process's counters since it started (server-probe.ts). */
interface Probe {
  seq: number;
  statements: Record<string, number>;
  redis: Record<string, number>;
  connects: number;
  /** V8 heap in use at the snapshot (MiB). */
  heapMb: number;
  /** Resident set size at the snapshot (MiB). */
  rssMb: number;
  /** Since the previous snapshot: time in flight by statement kind (ms). */
  timings: Record<string, { n: number; ms: number; maxMs: number }>;
  gc: { count: number; ms: number; maxMs: number; major: number; majorMs: number };
  eld: { p50: number; p99: number; max: number } | null;
  /** With `--trace`: the requests traced and the timeline since the previous snapshot. */
  trace?: ServerTrace;
}

/** CPU (µs) and voluntary context switches so far. */
interface Usage {
  server: number;
  serverSwitches: number;
  pg: Map<number, number>;
  pgSwitches: Map<number, number>;
  client: number;
}

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

/**
 * One server configuration of `--variants`: words `NAME=value` are its environment, the rest
 * node options; the word `procfile` stands for the Procfile's `web` options. `--server-node-args`
 * is added to each.
 */
function variant(spec: string, procfile: readonly string[], extra: readonly string[]) {
  const env: Record<string, string> = {};
  const nodeArgs: string[] = [];
  for (const word of spec.trim().split(/\s+/).filter(Boolean)) {
    if (word === 'procfile') nodeArgs.push(...procfile);
    else if (/^[A-Z][A-Z0-9_]*=/.test(word))
      env[word.slice(0, word.indexOf('='))] = word.slice(word.indexOf('=') + 1);
    else nodeArgs.push(word);
  }
  nodeArgs.push(...extra);
  return { label: spec.trim() || 'bare node', env, nodeArgs };
}

/** The --help text (a function: hoisted above the top-level `await main()`). */
function usage(): string {
  return `Triage overhead over HTTP: POST /api/v1/triage at fixed open-loop rates, the server in its
own process, against GET /healthz on the same server at the same rates (the floor).

  npx tsx bench/triage/http-overhead.ts [--seconds 8] [--rates 50,150] [--sequential 500]
    [--engines local,instant,slow,reservation] [--web 1] [--loop-delay] [--compiled]
    [--server-node-args "flags"] [--variants "procfile;--max-semi-space-size=32"] [--trace]

  --seconds N      length of each paced row (default 8)
  --rates a,b      open-loop rates in requests a second, evenly paced (default 50,150)
  --sequential N   requests one at a time per engine before the paced rows; 0 skips them (default 500)
  --engines list   local: the local SSVC engine; instant: a fake OpenAI-compatible provider that
                   answers at once; slow: the same fake after 50 ms; reservation: slow with a quota
                   reservation before every call (AI_CALL_LEASE_MAX=1) (default: all four)
  --web N          web processes, the requests sent to them in turn (default 1)
  --loop-delay     also sample each server's event-loop delay (a 1 ms timer: it changes what an
                   idle process does, so off by default)
  --compiled       run dist/src/main.js as the Procfile does (after npm run build) instead of the
                   sources under tsx
  --server-node-args "flags"   options for the server's node, added to the Procfile's web options
                   (e.g. "--max-semi-space-size=64")
  --server-output DIR  write each server process's stdout and stderr to DIR/web-<n>-<i>.log when it
                   stops (with --server-node-args "--trace-gc-nvp --trace-pretenuring", V8's traces)
  --variants "a;b" server configurations measured side by side, each row run once for each in
                   turn (a change in the machine's load falls on both): node options, NAME=value
                   environment, "procfile" for the Procfile's web options, "" for bare node
                   (default: procfile)
  --trace          trace each paced request in the server and print where the slowest 1% waited:
                   their phases (in, to provider, provider, store, out) and what overlapped them
                   (GC pauses, statements by kind, a pool with no idle connection), against all
                   requests (adds AsyncLocalStorage to the server: its CPU figures are not comparable)

The speed targets (overhead p50 <= 2 ms, p99 <= 10 ms at 200, 500 and 1,000 requests a second), with
the instant fake provider (run on an idle machine; prints the load average):
  one web process, then two (the Procfile's scale-out):
    npx tsx bench/triage/http-overhead.ts --engines instant --rates 200,500,1000 --seconds 10 --sequential 1000
    npx tsx bench/triage/http-overhead.ts --engines instant --rates 200,500,1000 --seconds 10 --sequential 1000 --web 2
  a 5-second smoke run:
    npx tsx bench/triage/http-overhead.ts --engines instant --rates 100 --seconds 5 --sequential 100

Columns: rate reached, 200s and not-200s, requests billed (distinct ledger request ids: must equal the
200s), p50/p99, the provider's p50 as the fake measured it, overhead (p50 and p99 minus the provider's
p50). Then per request, whatever the load: CPU of the server process(es), their PostgreSQL backends and
this client (µs), wake-ups of the server (a request and a second) and the backends, statements and
Redis commands sent, connections opened, GC (time a request, pauses, their total and the longest); each row's statements by kind with their times in flight; the idle cost.`;
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
  const webs = Number(opt('web', '1'));
  const eld = args.includes('--loop-delay');
  const trace = args.includes('--trace');
  const compiled = args.includes('--compiled');
  const serverNodeArgs = opt('server-node-args', '').split(' ').filter(Boolean);
  /** `--server-output DIR`: each server process's stdout and stderr, written there when it stops. */
  const serverOutput = args.includes('--server-output') ? opt('server-output', '') : '';
  let outputs = 0;
  const procfileArgs = procfileNodeArgs('web');
  /** Server configurations measured side by side, their rows alternated (see usage()). */
  const variants = (args.includes('--variants') ? opt('variants', '').split(';') : ['procfile']).map((v) =>
    variant(v, procfileArgs, serverNodeArgs),
  );

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

  /** The context switches a process (its main thread) has made: each is a sleep and a wake-up. */
  const procSwitches = (pid: number) => {
    try {
      const m = /voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return Number(m?.[1] ?? 0);
    } catch {
      return 0;
    }
  };

  /** `web` server processes on one database and one Redis prefix, each with the probe loaded. */
  async function server(env: Record<string, string>, nodeArgs: readonly string[]) {
    const db = await createBenchDatabase('bench_http');
    const prefix = `p${Math.random().toString(36).slice(2, 10)}`;
    const procs: { proc: ServerProcess; probeFile: string; seq: number }[] = [];
    for (let i = 0; i < webs; i++) {
      const probeFile = path.join(dir, `probe-${Date.now()}-${i}.json`);
      const proc = await startServerProcess(
        'web',
        {
          DATABASE_URL: db.url,
          KEY_PEPPER: 'bench-pepper-'.padEnd(48, 'x'),
          REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
          REDIS_PREFIX: prefix,
          LOG_LEVEL: 'silent',
          PLANS_FILE: path.resolve('bench/auth/unlimited-plans.json'),
          TRIAGE_CONFIG_FILE: path.join(dir, 'triage.json'),
          PROBE_FILE: probeFile,
          ...(eld ? { PROBE_ELD: '1' } : {}),
          ...(trace ? { PROBE_TRACE: '1' } : {}),
          ...env,
        },
        { nodeArgs: [...nodeArgs, '--import', 'tsx', '--import', PROBE], compiled },
      );
      procs.push({ proc, probeFile, seq: 0 });
    }
    const { key } = await signUpOverHttp(procs[0]!.proc.url);
    const client = new pg.Client(db.url);
    await client.connect();
    const dbName = new URL(db.url).pathname.slice(1);
    return {
      bases: procs.map((p) => p.proc.url),
      key,
      /** The probes' counters of every server process (see server-probe.ts). */
      async probes(): Promise<Probe[]> {
        const out: Probe[] = [];
        for (const p of procs) {
          const want = ++p.seq;
          p.proc.child.kill('SIGUSR2');
          for (;;) {
            await new Promise((r) => setTimeout(r, 5));
            try {
              const snap = JSON.parse(readFileSync(p.probeFile, 'utf8')) as Probe;
              if (snap.seq === want) {
                if (trace)
                  snap.trace = JSON.parse(readFileSync(`${p.probeFile}.trace`, 'utf8')) as ServerTrace;
                out.push(snap);
                break;
              }
            } catch {
              // not written yet
            }
          }
        }
        return out;
      },
      /** Distinct requests billed so far. */
      async billed(): Promise<number> {
        const r = await client.query<{ n: string }>(
          'SELECT count(DISTINCT request_id) AS n FROM usage_ledger',
        );
        return Number(r.rows[0]!.n);
      },
      /**
       * CPU so far (µs) and wake-ups: the server processes, their database's backends (by pid),
       * this process.
       */
      async cpu(): Promise<Usage> {
        const r = await client.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [dbName],
        );
        const u = process.cpuUsage();
        const pids = procs.map((p) => p.proc.child.pid!);
        return {
          server: pids.reduce((a, pid) => a + procCpuUs(pid), 0),
          serverSwitches: pids.reduce((a, pid) => a + procSwitches(pid), 0),
          pg: new Map(r.rows.map((x) => [x.pid, procCpuUs(x.pid)])),
          pgSwitches: new Map(r.rows.map((x) => [x.pid, procSwitches(x.pid)])),
          client: u.user + u.system,
        };
      },
      async stop() {
        await client.end();
        for (const [i, p] of procs.entries()) {
          await p.proc.stop('SIGTERM');
          if (serverOutput)
            writeFileSync(path.join(serverOutput, `web-${++outputs}-${i}.log`), p.proc.output());
        }
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

  /** One request at a time over HTTP (to the URLs in turn), as `paced` reports it. */
  async function oneAtATime(urls: readonly string[], request: RequestInit, n: number) {
    const latencies: number[] = [];
    let failures = 0;
    const start = performance.now();
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      const res = await send(urls[i % urls.length]!, request);
      if (res.status === 200) latencies.push(performance.now() - t);
      else failures++;
    }
    latencies.sort((a, b) => a - b);
    const q = (p: number) => +(latencies[Math.floor(p * latencies.length)] ?? NaN).toFixed(2);
    const reached = +(latencies.length / ((performance.now() - start) / 1000)).toFixed(1);
    return { latencies, failures, reached, p50: q(0.5), p99: q(0.99) };
  }

  /** The probes' counters summed over the server processes, `after` minus `before`. */
  function probeDelta(before: Probe[], after: Probe[]) {
    const sum = (ps: Probe[], pick: (p: Probe) => Record<string, number>) => {
      const m = new Map<string, number>();
      for (const p of ps) for (const [k, v] of Object.entries(pick(p))) m.set(k, (m.get(k) ?? 0) + v);
      return m;
    };
    const diff = (pick: (p: Probe) => Record<string, number>) => {
      const a = sum(after, pick);
      const b = sum(before, pick);
      return new Map([...a].map(([k, v]) => [k, v - (b.get(k) ?? 0)] as const).filter(([, v]) => v > 0));
    };
    const total = (ps: Probe[], f: (p: Probe) => number) => ps.reduce((x, p) => x + f(p), 0);
    return {
      statements: diff((p) => p.statements),
      redis: diff((p) => p.redis),
      connects: total(after, (p) => p.connects) - total(before, (p) => p.connects),
      gcMs: total(after, (p) => p.gc.ms) - total(before, (p) => p.gc.ms),
      gcCount: total(after, (p) => p.gc.count) - total(before, (p) => p.gc.count),
      gcMaxMs: Math.max(...after.map((p) => p.gc.maxMs)),
      heap: after.map((p) => p.heapMb).join(' + '),
      rss: after.map((p) => p.rssMb).join(' + '),
      timings: [
        ...after
          .flatMap((p) => Object.entries(p.timings))
          .reduce((m, [k, t]) => {
            const o = m.get(k) ?? { n: 0, ms: 0, maxMs: 0 };
            m.set(k, { n: o.n + t.n, ms: o.ms + t.ms, maxMs: Math.max(o.maxMs, t.maxMs) });
            return m;
          }, new Map<string, { n: number; ms: number; maxMs: number }>()),
      ],
      gcMajor: total(after, (p) => p.gc.major) - total(before, (p) => p.gc.major),
      gcMajorMs: total(after, (p) => p.gc.majorMs) - total(before, (p) => p.gc.majorMs),
      eldP99: after.every((p) => p.eld) ? Math.max(...after.map((p) => p.eld!.p99)) : null,
      eldMax: after.every((p) => p.eld) ? Math.max(...after.map((p) => p.eld!.max)) : null,
    };
  }
  const count = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

  const rows: Record<string, string | number>[] = [];
  const costs: Record<string, string | number>[] = [];
  const kinds: string[] = [];
  const attributions: string[] = [];
  /**
   * Runs `load` and adds its rows: latencies, provider time and billing; CPU, wake-ups and
   * round trips per request; the statements it sent by kind.
   */
  async function measure(
    s: Server,
    engine: string,
    target: string | number,
    fake: 'instant' | 'slow' | null,
    triage: boolean,
    load: () => Promise<{
      failures: number;
      reached: number;
      p50: number;
      p99: number;
      latencies: number[];
      sent?: SentRequest[];
    }>,
  ) {
    const since = fake ? (await fakeServed(fake, 0)).count : 0;
    const billedBefore = triage ? await s.billed() : 0;
    const probesBefore = await s.probes();
    const before = await s.cpu();
    const started = performance.now();
    const clientSpans: Span[] = [];
    const unwatch = trace ? watchStalls('client event loop late', clientSpans) : () => undefined;
    const r = await load();
    unwatch();
    const secs = (performance.now() - started) / 1000;
    const after = await s.cpu();
    const probesAfter = await s.probes();
    const probed = probeDelta(probesBefore, probesAfter);
    const answered = r.latencies.length;
    let pgUs = 0;
    for (const [pid, us] of after.pg) pgUs += us - (before.pg.get(pid) ?? 0);
    let pgSwitches = 0;
    for (const [pid, n] of after.pgSwitches) pgSwitches += n - (before.pgSwitches.get(pid) ?? 0);
    const served = fake ? (await fakeServed(fake, since)).served.sort((a, b) => a - b) : [];
    const provider = served.length === 0 ? 0 : served[Math.floor(served.length / 2)]!;
    const per = (us: number) => (answered === 0 ? NaN : Math.round(us / answered));
    const perN = (n: number) => (answered === 0 ? NaN : +(n / answered).toFixed(2));
    const row = `${engine} @ ${target}`;
    if (trace && r.sent && r.sent.length > 0) {
      attributions.push(
        `${row}:`,
        ...attribute(
          r.sent,
          probesAfter.map((p) => p.trace ?? { requests: [], spans: [] }),
          clientSpans,
        ),
      );
    }
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
    });
    costs.push({
      row,
      'server µs/req': per(after.server - before.server),
      'pg µs/req': per(pgUs),
      'client µs/req': per(after.client - before.client),
      'server wake/req': perN(after.serverSwitches - before.serverSwitches),
      'server wake/s': Math.round((after.serverSwitches - before.serverSwitches) / secs),
      'pg wake/req': perN(pgSwitches),
      'pg stmt/req': perN(count(probed.statements)),
      'redis cmd/req': perN(count(probed.redis)),
      'pg connects': probed.connects,
      'gc ms/req': perN(probed.gcMs),
      'gc pauses': probed.gcCount,
      'gc total ms': Math.round(probed.gcMs),
      'gc max ms': +probed.gcMaxMs.toFixed(1),
      'major gcs (ms)': `${probed.gcMajor} (${Math.round(probed.gcMajorMs)})`,
      'heap MiB after': probed.heap,
      'rss MiB after': probed.rss,
      ...(probed.eldP99 === null
        ? {}
        : {
            'loop delay p99 ms': +probed.eldP99.toFixed(1),
            'loop delay max ms': +probed.eldMax!.toFixed(1),
          }),
    });
    if (triage) {
      const top = [...probed.statements, ...[...probed.redis].map(([k, v]) => [`redis ${k}`, v] as const)]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${v} ${k}`);
      kinds.push(`${row} (${answered} answered): ${top.join('; ') || 'none'}`);
      for (const [k, t] of probed.timings.sort((a, b) => b[1].n - a[1].n))
        kinds.push(
          `    in flight: ${k}: ${t.n}×, mean ${(t.ms / t.n).toFixed(2)} ms, longest ${t.maxMs.toFixed(1)} ms`,
        );
    }
  }

  /** What the processes cost doing nothing (timers, pools, keep-alives), per second of idle. */
  async function idle(s: Server, secs: number) {
    const probesBefore = await s.probes();
    const before = await s.cpu();
    await new Promise((r) => setTimeout(r, secs * 1000));
    const after = await s.cpu();
    const probed = probeDelta(probesBefore, await s.probes());
    let pgUs = 0;
    for (const [pid, us] of after.pg) pgUs += us - (before.pg.get(pid) ?? 0);
    const perSec = (n: number) => +(n / secs).toFixed(1);
    return (
      `idle for ${secs} s: server ${perSec((after.server - before.server) / 1000)} ms CPU/s, ` +
      `PostgreSQL ${perSec(pgUs / 1000)} ms CPU/s, ` +
      `server wake-ups ${perSec(after.serverSwitches - before.serverSwitches)}/s, ` +
      `statements ${perSec(count(probed.statements))}/s, Redis commands ${perSec(count(probed.redis))}/s`
    );
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
  const idles: string[] = [];
  const loadAtStart = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  for (const [id, engine, env, fake] of all) {
    if (!engines.includes(id)) continue;
    const setups = [];
    for (const v of variants) {
      const s = await server({ ...env, ...v.env }, v.nodeArgs);
      const tag = variants.length > 1 ? ` [${v.label}]` : '';
      setups.push({
        s,
        tag,
        triageUrls: s.bases.map((b) => `${b}/api/v1/triage`),
        healthUrls: s.bases.map((b) => `${b}/healthz`),
      });
    }
    for (const { s, triageUrls, healthUrls } of setups) {
      await pacedLoad(triageUrls, init(s, 'POST'), 50, 2); // warm-up
      await oneAtATime(healthUrls, {}, 200);
    }
    for (const { s, tag } of setups) idles.push(`${engine}${tag}: ${await idle(s, 3)}`);
    // Each row runs once per variant, one after the other, so a change in the machine's load
    // falls on both alike.
    if (!floorDone) {
      // The floor, in the same run: the same server, client and pacing, a route that does nothing.
      if (sequential > 0)
        for (const { s, tag, healthUrls } of setups)
          await measure(s, `GET /healthz (floor)${tag}`, 'one at a time', null, false, () =>
            oneAtATime(healthUrls, {}, sequential),
          );
      for (const rate of rates)
        for (const { s, tag, healthUrls } of setups)
          await measure(s, `GET /healthz (floor)${tag}`, rate, null, false, () =>
            pacedLoad(healthUrls, {}, rate, seconds, undefined, { tag: trace }),
          );
      floorDone = true;
    }
    if (sequential > 0)
      for (const { s, tag, triageUrls } of setups)
        await measure(s, `${engine}${tag}`, 'one at a time', fake, true, () =>
          oneAtATime(triageUrls, init(s, 'POST'), sequential),
        );
    for (const rate of rates)
      for (const { s, tag, triageUrls } of setups)
        await measure(s, `${engine}${tag}`, rate, fake, true, () =>
          pacedLoad(triageUrls, init(s, 'POST'), rate, seconds, undefined, { tag: trace }),
        );
    for (const { s } of setups) await s.stop();
  }
  child.disconnect();
  await closeClient();
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(
    `\ntriage over HTTP (${webs} web process${webs === 1 ? '' : 'es'}, each its own process; Redis for limits; ` +
      `server node options: ${variants.map((v) => `[${v.label}] ${v.nodeArgs.join(' ') || 'none'}`).join(', ')}), ` +
      `load average ${loadAtStart} at the start, ${load} at the end`,
  );
  console.table(rows);
  console.log(
    '\nper request (load-independent): CPU of the server process(es), their PostgreSQL backends and this client; ' +
      'wake-ups (voluntary context switches of the server main thread(s) and of the backends); ' +
      'statements and Redis commands the server sent; connections it opened; GC',
  );
  console.table(costs);
  console.log('\nidle cost (nothing sent), before the rows:');
  for (const line of idles) console.log(`  ${line}`);
  console.log('\nstatements and Redis commands sent, by kind, per row:');
  for (const line of kinds) console.log(`  ${line}`);
  if (trace) {
    console.log('\nwhere the slowest 1% waited, per paced row (client and server clocks lined up):');
    for (const line of attributions) console.log(line);
  }
}
