/**
 * Where the slowest requests of a row waited: the client's send and answer times
 * (`paced-load.ts` with `tag`) lined up with the traced server's timestamps and timeline
 * (`request-trace.ts`), all on CLOCK_MONOTONIC. Each request splits into phases:
 *
 * - **in**: sent → the server read it (the server's event loop busy or the process not running);
 * - **to provider**: read → its provider call started (auth, validation, enrichment, the prompt);
 * - **provider**: the provider call, request out to the last byte in;
 * - **store**: provider answered → the answer written out (waiting for its group's turn, the
 *   answer statement in flight, serialising);
 * - **out**: written out → the client read it whole.
 *
 * For the slowest 1% (at or over the row's p99) against all requests: each phase's mean, and
 * what overlapped them on the server's timeline (GC pauses, statements in flight by kind, a
 * statement that found its pool with no idle connection), so a cause shows as overlapping the
 * slow requests more than the rest.
 */
import type { SentRequest } from '../lib/paced-load.js';
import type { RequestTrace, Span } from './request-trace.js';

const PHASES = ['in', 'to provider', 'provider', 'store', 'out'] as const;

/** A server's traces and timeline, from one probe snapshot. */
export interface ServerTrace {
  requests: RequestTrace[];
  spans: Span[];
}

interface Joined {
  latency: number;
  phases: number[];
  window: [number, number];
  spans: Span[];
}

function join(sent: readonly SentRequest[], servers: readonly ServerTrace[]): Joined[] {
  const bySeq = new Map<number, { trace: RequestTrace; spans: Span[] }>();
  for (const s of servers) for (const t of s.requests) bySeq.set(t.seq, { trace: t, spans: s.spans });
  const out: Joined[] = [];
  for (const c of sent) {
    const found = bySeq.get(c.seq);
    if (!found || c.status !== 200) continue;
    const t = found.trace;
    const provStart = t.provStart ?? t.arrive;
    const provEnd = t.provEnd ?? provStart;
    const finish = t.finish ?? c.done;
    out.push({
      latency: c.done - c.sent,
      phases: [
        t.arrive - c.sent,
        provStart - t.arrive,
        provEnd - provStart,
        finish - provEnd,
        c.done - finish,
      ],
      window: [c.sent, c.done],
      spans: found.spans,
    });
  }
  return out;
}

/** Span kinds as reported: statements shortened, and a pool found with no idle connection apart. */
function label(s: Span): string[] {
  const kind = s.kind
    .replace(/^named:/, '')
    .replace(/^SELECT version.*/, 'key-version read')
    .replace(/^WITH counts AS.*/, 'request-meter flush');
  return s.noIdle ? [kind, 'a statement found its pool with no idle connection'] : [kind];
}

/** ms of [a, b] covered by each span kind (overlaps within a kind counted once per span). */
function overlaps(window: [number, number], spans: readonly Span[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const s of spans) {
    const ms = Math.min(window[1], s.end) - Math.max(window[0], s.start);
    if (ms <= 0) continue;
    for (const k of label(s)) m.set(k, (m.get(k) ?? 0) + ms);
  }
  return m;
}

/** The lines to print for one row: phases and what overlapped, slowest 1% against all. */
export function attribute(
  sent: readonly SentRequest[],
  servers: readonly ServerTrace[],
  client: readonly Span[] = [],
): string[] {
  const all = join(
    sent,
    servers.map((s) => ({ ...s, spans: [...s.spans, ...client] })),
  ).sort((a, b) => a.latency - b.latency);
  if (all.length < 100) return [`  (${all.length} traced answers: too few to attribute)`];
  const p99 = all[Math.floor(0.99 * all.length)]!.latency;
  const slow = all.filter((r) => r.latency >= p99);
  const mean = (rs: readonly Joined[], f: (r: Joined) => number) =>
    rs.reduce((a, r) => a + f(r), 0) / rs.length;
  const fmt = (n: number) => n.toFixed(n < 10 ? 2 : 1);
  const lines = [
    `  slowest 1%: ${slow.length} of ${all.length} answers at or over ${fmt(p99)} ms; mean phases, slowest / all (ms):`,
    `    ${PHASES.map((p, i) => `${p} ${fmt(mean(slow, (r) => r.phases[i]!))} / ${fmt(mean(all, (r) => r.phases[i]!))}`).join('; ')}`,
  ];
  const kinds = new Map<string, { slowHit: number; slowMs: number; allHit: number; allMs: number }>();
  for (const [rs, which] of [
    [slow, 'slow'],
    [all, 'all'],
  ] as const) {
    for (const r of rs) {
      for (const [k, ms] of overlaps(r.window, r.spans)) {
        const o = kinds.get(k) ?? { slowHit: 0, slowMs: 0, allHit: 0, allMs: 0 };
        if (which === 'slow') {
          o.slowHit++;
          o.slowMs += ms;
        } else {
          o.allHit++;
          o.allMs += ms;
        }
        kinds.set(k, o);
      }
    }
  }
  lines.push('    overlapping a request (share of requests; mean ms of its time covered), slowest / all:');
  for (const [k, o] of [...kinds].sort((a, b) => b[1].slowMs - a[1].slowMs).slice(0, 8)) {
    const pct = (n: number, d: number) => `${Math.round((100 * n) / d)}%`;
    lines.push(
      `      ${k}: ${pct(o.slowHit, slow.length)} ${fmt(o.slowMs / slow.length)} ms / ${pct(o.allHit, all.length)} ${fmt(o.allMs / all.length)} ms`,
    );
  }
  lines.push(
    '    in each phase of the slowest 1%, what overlapped it most (share of them; mean ms covered):',
  );
  for (const [i, phase] of PHASES.entries()) {
    const inPhase = new Map<string, { hit: number; ms: number }>();
    for (const r of slow) {
      const from = r.window[0] + r.phases.slice(0, i).reduce((a, b) => a + b, 0);
      for (const [k, ms] of overlaps([from, from + r.phases[i]!], r.spans)) {
        const o = inPhase.get(k) ?? { hit: 0, ms: 0 };
        o.hit++;
        o.ms += ms;
        inPhase.set(k, o);
      }
    }
    const top = [...inPhase]
      .sort((a, b) => b[1].ms - a[1].ms)
      .slice(0, 3)
      .map(([k, o]) => `${k} ${Math.round((100 * o.hit) / slow.length)}% ${fmt(o.ms / slow.length)}`);
    lines.push(`      ${phase} (${fmt(mean(slow, (r) => r.phases[i]!))}): ${top.join(', ') || 'nothing'}`);
  }
  // A request whose provider call started within 1 ms of a lease's reservation landing, after
  // waiting more than 1 ms since it was read, waited for that reservation.
  const leaseWait = (r: Joined): number => {
    const read = r.window[0] + r.phases[0]!;
    const provStart = read + r.phases[1]!;
    const landed = r.spans.find(
      (s) =>
        s.kind === 'named:quota-reserve-up-to' && s.end <= provStart && provStart - s.end < 1 && s.end > read,
    );
    return landed && provStart - read > 1 ? provStart - Math.max(read, landed.start) : 0;
  };
  const waited = (rs: readonly Joined[]) => {
    const w = rs.map(leaseWait).filter((ms) => ms > 0);
    const pct = Math.round((100 * w.length) / rs.length);
    return `${pct}% (${w.length}), ${fmt(w.length ? w.reduce((a, b) => a + b, 0) / w.length : 0)} ms mean`;
  };
  lines.push(
    `    waited for a lease's reservation before the provider call: slowest ${waited(slow)}; all ${waited(all)}`,
  );
  const worst = slow.slice(-5).reverse();
  lines.push(
    '    the five slowest (ms: total = in + to provider + provider + store + out; the largest overlaps):',
  );
  for (const r of worst) {
    const top = [...overlaps(r.window, r.spans)]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([k, ms]) => `${k} ${fmt(ms)}`);
    lines.push(`      ${fmt(r.latency)} = ${r.phases.map(fmt).join(' + ')}; ${top.join(', ') || 'nothing'}`);
  }
  return lines;
}
