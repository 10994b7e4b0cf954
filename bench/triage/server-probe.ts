/**
 * Counters for a bench's server process, loaded before the app (`--import`): PostgreSQL
 * statements by kind and connections opened, Redis commands by name, garbage collections and
 * their pauses, and (with `PROBE_ELD=1`) the event loop's delay. Counting is a Map increment per
 * statement or command and adds no timer; the delay histogram samples on a 1 ms timer of its own,
 * so it is off unless asked for (it changes what an idle process does).
 *
 * On SIGUSR2 the process writes its counters since start, as JSON, to `PROBE_FILE` (written to a
 * temporary name and renamed, so a reader never sees half a file) and resets the delay
 * histogram, the longest pause and the statements' times in flight (these are since the
 * previous snapshot). `bench/triage/http-overhead.ts` reads them around each row. With
 * `PROBE_TRACE=1` it also writes, to `PROBE_FILE.trace` before the counters, the requests traced
 * and the timeline since the previous snapshot (`request-trace.ts`).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import pg from 'pg';
import { Redis } from 'ioredis';
import { installTracer } from './request-trace.js';

const file = process.env.PROBE_FILE;
if (file) install(file);

function install(out: string): void {
  const statements = new Map<string, number>();
  const redis = new Map<string, number>();
  let connects = 0;
  const gc = { count: 0, ms: 0, maxMs: 0, major: 0, majorMs: 0 };
  let seq = 0;

  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  /** A statement's kind: its prepared name, else its first words (parameters are not in the text). */
  const kind = (q: unknown): string => {
    if (typeof q === 'string') return q.replace(/\s+/g, ' ').trim().slice(0, 48);
    const o = q as { name?: string; text?: string } | null;
    if (o?.name) return `named:${o.name}`;
    return typeof o?.text === 'string' ? kind(o.text) : 'other';
  };

  /** Time in flight by kind (ms): count, total, longest; named statements sent to a connection that had not prepared them apart. */
  const timings = new Map<string, { n: number; ms: number; maxMs: number }>();
  const time = (k: string, ms: number) => {
    const t = timings.get(k) ?? { n: 0, ms: 0, maxMs: 0 };
    t.n++;
    t.ms += ms;
    t.maxMs = Math.max(t.maxMs, ms);
    timings.set(k, t);
  };
  const tracer = process.env.PROBE_TRACE === '1' ? installTracer() : null;
  /** Statements sent through a pool: when (its wait for a connection counts) and whether it had an idle one. */
  const viaPool = new WeakMap<object, { at: number; noIdle: boolean }>();
  const poolProto = pg.Pool.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const poolQuery = poolProto.query!;
  poolProto.query = function (this: pg.Pool, ...args: unknown[]) {
    if (tracer && args[0] !== null && typeof args[0] === 'object')
      viaPool.set(args[0], { at: performance.now(), noIdle: this.idleCount === 0 });
    return poolQuery.apply(this, args);
  };
  const proto = pg.Client.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const query = proto.query!;
  proto.query = function (
    this: { connection?: { parsedStatements?: Record<string, string> } },
    ...args: unknown[]
  ) {
    const k = kind(args[0]);
    bump(statements, k);
    const name = (args[0] as { name?: string } | null)?.name;
    const label =
      name && this.connection?.parsedStatements?.[name] === undefined
        ? `${k} (not yet prepared on its connection)`
        : k;
    const started = performance.now();
    const pooled = args[0] !== null && typeof args[0] === 'object' ? viaPool.get(args[0]) : undefined;
    const traced = tracer?.statement(k, pooled?.noIdle ?? false, pooled ? started - pooled.at : 0);
    const ended = () => {
      time(label, performance.now() - started);
      traced?.();
    };
    const last = args.length - 1;
    const done = args[last];
    if (typeof done === 'function') {
      args[last] = (...r: unknown[]) => {
        ended();
        return (done as (...x: unknown[]) => unknown)(...r);
      };
      return query.apply(this, args);
    }
    const result = query.apply(this, args) as Promise<unknown> | undefined;
    if (result && typeof result.then === 'function') result.then(ended, ended);
    return result;
  };
  const connect = proto.connect!;
  proto.connect = function (this: unknown, ...args: unknown[]) {
    connects++;
    return connect.apply(this, args);
  };

  const rproto = Redis.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const send = rproto.sendCommand!;
  rproto.sendCommand = function (this: unknown, ...args: unknown[]) {
    const c = args[0] as { name?: string } | undefined;
    bump(redis, String(c?.name ?? 'other'));
    return send.apply(this, args);
  };

  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.count++;
      gc.ms += e.duration;
      gc.maxMs = Math.max(gc.maxMs, e.duration);
      if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        gc.major++;
        gc.majorMs += e.duration;
      }
    }
  }).observe({ entryTypes: ['gc'] });

  const eld = process.env.PROBE_ELD === '1' ? monitorEventLoopDelay({ resolution: 1 }) : null;
  eld?.enable();

  process.on('SIGUSR2', () => {
    const snapshot = {
      seq: ++seq,
      statements: Object.fromEntries(statements),
      redis: Object.fromEntries(redis),
      connects,
      heapMb: +(process.memoryUsage().heapUsed / 2 ** 20).toFixed(1),
      rssMb: Math.round(process.memoryUsage().rss / 2 ** 20),
      timings: Object.fromEntries(timings),
      gc: { ...gc },
      eld: eld
        ? {
            p50: eld.percentile(50) / 1e6,
            p99: eld.percentile(99) / 1e6,
            max: eld.max / 1e6,
          }
        : null,
    };
    eld?.reset();
    gc.maxMs = 0;
    timings.clear();
    if (tracer) writeFileSync(`${out}.trace`, JSON.stringify(tracer.drain()));
    writeFileSync(`${out}.tmp`, JSON.stringify(snapshot));
    renameSync(`${out}.tmp`, out);
  });
}
