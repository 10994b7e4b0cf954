/**
 * Per-request timestamps inside a bench's server process, for finding where the slowest requests
 * wait (loaded by `server-probe.ts` when `PROBE_TRACE=1`). A request that carries the header
 * `x-bench-seq` (sent by `bench/lib/paced-load.ts` with `tag`) gets a record of when the server
 * read it, when its provider call started and ended (undici's diagnostics channels), when its
 * own answer statement (if it led a group) started and ended, and when its answer was written
 * out. Beside them, a timeline of what may make a request wait whatever it does: GC pauses and
 * every statement in flight by kind, with how many idle connections its pool had when it was
 * sent. Times are `monotonicMs()`: CLOCK_MONOTONIC, the same clock in every process of the
 * machine, so the client's send and receive times line up with these.
 *
 * Each request costs a few map operations; a 5 ms timer notes when the event loop ran late
 * (`watchStalls`), which wakes an idle process 200 times a second.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import { constants, performance, PerformanceObserver } from 'node:perf_hooks';

/** CLOCK_MONOTONIC in ms (libuv's hrtime), comparable across processes. */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/** One traced request, as the server saw it. */
export interface RequestTrace {
  seq: number;
  arrive: number;
  provStart?: number;
  provEnd?: number;
  storeStart?: number;
  storeEnd?: number;
  finish?: number;
}

/** Something in flight on the server's timeline: a GC pause or a statement. */
export interface Span {
  kind: string;
  start: number;
  end: number;
  /** For a statement: its pool had no idle connection when it was sent. */
  noIdle?: boolean;
  /** For a statement sent through a pool: ms it waited for a connection (inside start..end). */
  poolWaitMs?: number;
}

/**
 * Records as a span each time this process's event loop ran late by more than `overMs` (a 5 ms
 * timer that fired late), named `<kind> (busy)` when the process used at least half a core
 * meanwhile (its JavaScript or GC), `<kind> (not running)` otherwise (waiting for a CPU, or
 * for I/O it blocked on). Returns a stop.
 */
export function watchStalls(kind: string, spans: { push(s: Span): unknown }, overMs = 10): () => void {
  const every = 5;
  let last = monotonicMs();
  let cpu = process.cpuUsage();
  const timer = setInterval(() => {
    const now = monotonicMs();
    const used = process.cpuUsage(cpu);
    if (now - last > every + overMs) {
      const busy = (used.user + used.system) / 1000 >= (now - last) / 2;
      spans.push({ kind: `${kind} (${busy ? 'busy' : 'not running'})`, start: last + every, end: now });
    }
    last = now;
    cpu = process.cpuUsage();
  }, every);
  return () => clearInterval(timer);
}

export interface Tracer {
  /**
   * Called with each statement as a connection sends it (from the probe's `pg` wrapper), with
   * how long it waited for that connection; returns its end callback.
   */
  statement(kind: string, noIdle: boolean, poolWaitMs: number): () => void;
  /** The traces and spans since the previous call. */
  drain(): { requests: RequestTrace[]; spans: Span[] };
}

const ANSWER_STATEMENTS = new Set(['named:record-triage', 'named:record-triages']);

export function installTracer(): Tracer {
  const als = new AsyncLocalStorage<RequestTrace>();
  let requests: RequestTrace[] = [];
  let spans: Span[] = [];

  const emit = http.Server.prototype.emit as (
    this: http.Server,
    event: string,
    ...args: unknown[]
  ) => boolean;
  http.Server.prototype.emit = function (this: http.Server, event: string, ...args: unknown[]) {
    if (event !== 'request') return emit.call(this, event, ...args);
    const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
    const seq = req.headers['x-bench-seq'];
    if (typeof seq !== 'string') return emit.call(this, event, ...args);
    const trace: RequestTrace = { seq: Number(seq), arrive: monotonicMs() };
    requests.push(trace);
    res.once('finish', () => (trace.finish = monotonicMs()));
    return als.run(trace, () => emit.call(this, event, ...args));
  } as typeof http.Server.prototype.emit;

  const byRequest = new WeakMap<object, RequestTrace>();
  diagnostics.subscribe('undici:request:create', (m) => {
    const trace = als.getStore();
    if (!trace) return;
    trace.provStart = monotonicMs();
    byRequest.set((m as { request: object }).request, trace);
  });
  diagnostics.subscribe('undici:request:trailers', (m) => {
    const trace = byRequest.get((m as { request: object }).request);
    if (trace) trace.provEnd = monotonicMs();
  });

  // performance.now() and monotonicMs() are one clock from different origins.
  const offset = monotonicMs() - performance.now();
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const major =
        (e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;
      spans.push({
        kind: major ? 'gc major' : 'gc minor',
        start: e.startTime + offset,
        end: e.startTime + e.duration + offset,
      });
    }
  }).observe({ entryTypes: ['gc'] });

  watchStalls('server event loop late', { push: (s: Span) => spans.push(s) });

  return {
    statement(kind, noIdle, poolWaitMs) {
      const start = monotonicMs() - poolWaitMs;
      const trace = ANSWER_STATEMENTS.has(kind) ? als.getStore() : undefined;
      if (trace) trace.storeStart = start;
      return () => {
        const end = monotonicMs();
        if (trace) trace.storeEnd = end;
        spans.push({
          kind,
          start,
          end,
          ...(noIdle ? { noIdle } : {}),
          ...(poolWaitMs > 0.05 ? { poolWaitMs } : {}),
        });
      };
    },
    drain() {
      const out = { requests, spans };
      requests = [];
      spans = [];
      return out;
    },
  };
}
