import { Pool } from 'undici';

/**
 * The load's HTTP client: an undici `Pool` per origin (keep-alive, no connection limit, as the
 * global `fetch` has), `pool.request` with no `Response` object built. The client shares the
 * machine with the server it measures, so its CPU is taken from the service's: global `fetch`
 * cost 350–550 µs of this process's CPU a request, this 36–107 µs (4,000 sequential POSTs to a
 * bare `node:http` server, alternated, at load 9.5). Bodies are strings; headers a plain record.
 */
const pools = new Map<string, Pool>();
const targets = new Map<string, { pool: Pool; path: string }>();

function targetOf(url: string): { pool: Pool; path: string } {
  let target = targets.get(url);
  if (!target) {
    const u = new URL(url);
    let pool = pools.get(u.origin);
    if (!pool) {
      pool = new Pool(u.origin, { connections: null });
      pools.set(u.origin, pool);
    }
    target = { pool, path: u.pathname + u.search };
    targets.set(url, target);
  }
  return target;
}

/** One request: its status and its body as text (read whole). */
export async function send(url: string, init: RequestInit = {}): Promise<{ status: number; text: string }> {
  const { pool, path } = targetOf(url);
  const res = await pool.request({
    path,
    method: (init.method ?? 'GET') as 'GET',
    headers: (init.headers ?? {}) as Record<string, string>,
    body: (init.body as string | undefined) ?? null,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

/** Closes the client's connections (so the process can exit at once). */
export async function closeClient(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  targets.clear();
  await Promise.all(all.map((p) => p.close()));
}

/** CLOCK_MONOTONIC in ms, the clock a traced server stamps its side of a request with. */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/** A request sent with `tag`: its number (header `x-bench-seq`), when it was sent and answered. */
export interface SentRequest {
  seq: number;
  sent: number;
  done: number;
  status: number;
}

let nextSeq = 0;

/**
 * Open-loop, evenly paced load: one request every 1/rate seconds for `secs`, whatever the answers
 * do (autocannon's `overallRate` sends each second's requests in a burst, which measures the
 * burst's queue rather than the service). Given several URLs (one per server process), the
 * requests go to them in turn, as a round-robin load balancer would send them. Returns the
 * latencies of the 200 answers (ms, sorted; from the request's send to its body read whole), the
 * failures, the rate reached and p50/p99; `onAnswer` sees each answer's status and body. With
 * `tag`, each request carries a number in `x-bench-seq` and `sent` lists them with their send and
 * answer times (`monotonicMs`), for lining up with a traced server's timestamps.
 */
export async function paced(
  url: string | readonly string[],
  init: RequestInit,
  rate: number,
  secs: number,
  onAnswer?: (status: number, body: string) => void,
  options: { tag?: boolean } = {},
): Promise<{
  latencies: number[];
  failures: number;
  reached: number;
  p50: number;
  p99: number;
  sent: SentRequest[];
}> {
  const latencies: number[] = [];
  const sent: SentRequest[] = [];
  let failures = 0;
  const inflight: Promise<void>[] = [];
  const start = performance.now();
  const total = Math.round(rate * secs);
  const urls = typeof url === 'string' ? [url] : url;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t = performance.now();
    const seq = options.tag ? nextSeq++ : -1;
    const traced = options.tag
      ? { ...init, headers: { ...(init.headers as Record<string, string>), 'x-bench-seq': String(seq) } }
      : init;
    const sentAt = options.tag ? monotonicMs() : 0;
    inflight.push(
      send(urls[i % urls.length]!, traced).then(
        ({ status, text }) => {
          onAnswer?.(status, text);
          if (status === 200) latencies.push(performance.now() - t);
          else failures++;
          if (options.tag) sent.push({ seq, sent: sentAt, done: monotonicMs(), status });
        },
        () => void failures++,
      ),
    );
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const q = (p: number) =>
    +(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN).toFixed(2);
  return {
    latencies,
    failures,
    reached: +(latencies.length / elapsed).toFixed(1),
    p50: q(0.5),
    p99: q(0.99),
    sent,
  };
}
