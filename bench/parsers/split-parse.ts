/**
 * Experiment kept for the bench, not used in production: one large file cut at record boundaries
 * (`split-plan.ts`) and parsed by several pool threads (`parse-range-thread.ts`), findings
 * delivered in file order with single-thread recordIndex values. bench/parsers/README.md has the
 * measurement and why it is not wired into `src/workers/parser-pool.ts` (it did not pay on two
 * shared cores). Runs from TypeScript source only (tsx).
 *
 *   npx tsx bench/parsers/run-one.ts --mode split --tasks 2 --file bench/.data/nessus-100mb.xml
 */
import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { Finding, ParseResult } from '../../src/parsers/index.js';
import { ScopeCollector } from '../../src/parsers/scope.js';
import type { ParseThreadResult, ParseThreadTask } from '../../src/workers/parse-thread.js';
import {
  parseFileInPool,
  type BatchInfo,
  type ParseFileRequest,
  type ParserPool,
} from '../../src/workers/parser-pool.js';
import type { ParseRangeTask } from './parse-range-thread.js';
import { planSplit, type SplitSegment } from './split-plan.js';

const RANGE_THREAD = fileURLToPath(new URL('./parse-range-thread.ts', import.meta.url));

type BatchMessage = { type: 'batch'; seq: number; findings: Finding[]; bytesRead: number };

/** Options of {@link parseFileSplitInPool}. */
export interface SplitParseRequest extends ParseFileRequest {
  /** Segments parsed at the same time (use the pool's thread count). @defaultValue 2 */
  threads?: number;
  /** Target segment size; bounds what is buffered ahead of delivery. @defaultValue 16 MiB */
  segmentBytes?: number;
  /** Smaller files are parsed whole. @defaultValue 32 MiB */
  minSplitBytes?: number;
}

/** A segment running in the pool: its batches queue here until it is the one being delivered. */
interface SegmentRun {
  queue: (BatchMessage & { acked: boolean })[];
  current: boolean;
  settled: boolean;
  outcome: Promise<ParseThreadResult>;
  port: MessagePort;
  wake: (() => void) | null;
}

/**
 * Like {@link parseFileInPool}, but a large plain Nessus, OpenVAS or Qualys host-list file, or
 * CLI JSON Lines, is cut at record boundaries (`split-plan.ts`) and up to `threads` segments are
 * parsed at once. Batches still reach `onBatch` in file order with the recordIndex a single-thread
 * parse gives. Segments ahead of the one being delivered are buffered here (at most `threads - 1`
 * segments of findings); the one being delivered is paced by `onBatch` as usual. If any segment
 * fails, the others are stopped and the whole file is parsed on one thread, skipping the findings
 * already delivered, so errors carry their true line and column. Other files go to
 * {@link parseFileInPool} unchanged.
 */
export async function parseFileSplitInPool(
  pool: ParserPool,
  request: SplitParseRequest,
  onBatch: (batch: Finding[], info: BatchInfo) => Promise<void>,
): Promise<ParseResult> {
  const { threads: threadsOption, segmentBytes, minSplitBytes, ...single } = request;
  const plan =
    request.gzip === true
      ? null
      : await planSplit(request.path, { segmentBytes, minFileBytes: minSplitBytes });
  if (!plan || (request.format && request.format !== plan.format))
    return parseFileInPool(pool, single, onBatch);
  const threads = Math.max(1, threadsOption ?? 2);
  const runs: SegmentRun[] = [];
  const start = (segment: SplitSegment): SegmentRun => {
    const { port1, port2 } = new MessageChannel();
    const run: SegmentRun = {
      queue: [],
      current: false,
      settled: false,
      outcome: null!,
      port: port1,
      wake: null,
    };
    port1.on('message', (msg: BatchMessage) => {
      const acked = !run.current;
      // Ahead of delivery: acknowledge at once so the segment keeps parsing; it is buffered here.
      if (acked) port1.postMessage({ type: 'ack', seq: msg.seq });
      run.queue.push({ ...msg, acked });
      run.wake?.();
    });
    const task: ParseRangeTask = { ...single, format: plan.format, ...segment, port: port2 };
    run.outcome = (
      pool.run(task as unknown as ParseThreadTask, {
        filename: RANGE_THREAD,
        transferList: [port2],
      }) as Promise<ParseThreadResult>
    ).finally(() => {
      run.settled = true;
      run.wake?.();
    });
    // Awaited in order later; a crash of a segment ahead must not count as unhandled meanwhile.
    run.outcome.catch(() => undefined);
    return run;
  };
  let delivered = 0;
  const notes = new Set<string>();
  const scope = new ScopeCollector();
  let failed = false;
  try {
    for (let k = 0; k < plan.segments.length && !failed; k++) {
      while (runs.length < Math.min(plan.segments.length, k + threads))
        runs.push(start(plan.segments[runs.length]!));
      const run = runs[k]!;
      run.current = true;
      const base = delivered;
      for (;;) {
        const msg = run.queue.shift();
        if (msg) {
          for (const f of msg.findings) f.recordIndex += base;
          delivered += msg.findings.length;
          await onBatch(msg.findings, { bytesRead: msg.bytesRead });
          if (!msg.acked) run.port.postMessage({ type: 'ack', seq: msg.seq });
        } else if (run.settled) break;
        else await new Promise<void>((resolve) => (run.wake = resolve));
      }
      const outcome = await run.outcome;
      if (!outcome.ok) failed = true;
      else {
        outcome.result.notes.forEach((n) => notes.add(n));
        outcome.result.scope.scanners.forEach((n) => scope.addScanner(n));
        outcome.result.scope.hosts.forEach((h) => scope.addHost(h));
        outcome.result.scope.subjects.forEach((n) => scope.addSubject(n));
      }
    }
  } finally {
    // Stop segments still running (after a failure or a consumer error) and wait for them.
    for (const run of runs) if (!run.settled) run.port.postMessage({ type: 'abort' });
    await Promise.allSettled(runs.map((r) => r.outcome));
    for (const run of runs) run.port.close();
  }
  if (!failed)
    return {
      format: plan.format,
      count: delivered,
      bytes: plan.size,
      notes: [...notes],
      scope: scope.result(),
    };
  const already = delivered;
  return parseFileInPool(pool, single, async (batch, info) => {
    const rest =
      batch[batch.length - 1]!.recordIndex < already ? [] : batch.filter((f) => f.recordIndex >= already);
    if (rest.length > 0) await onBatch(rest, info);
  });
}
