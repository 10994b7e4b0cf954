import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { ParseError, type Finding, type ParseResult } from '../parsers/index.js';
import { serveBytePort } from './byte-port.js';
import type {
  ParseFileRequest,
  ParseStreamRequest,
  ParseThreadResult,
  ParseThreadTask,
} from './parse-task.js';

export type { ParseFileRequest, ParseStreamRequest } from './parse-task.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Options of {@link createParserPool}. */
export interface ParserPoolOptions {
  /** Worker threads. @defaultValue Piscina's default (available parallelism) */
  maxThreads?: number;
  /**
   * Threads kept warm. None by default: a worker process that is not parsing (one running an
   * export, say) does not pay a thread's memory (docs/operations.md#memory-of-a-worker).
   * @defaultValue 0
   */
  minThreads?: number;
  /**
   * How long a thread with nothing to parse lives on, so a run of scans starts one thread, once.
   * @defaultValue 60000
   */
  idleTimeoutMs?: number;
  /** Per-thread V8 old-space cap: a runaway parse kills its thread, not the process. @defaultValue 512 */
  maxOldGenerationSizeMb?: number;
}

/** A Piscina pool running `parse-thread`. */
export type ParserPool = Piscina<ParseThreadTask, ParseThreadResult>;

/**
 * Creates the parser thread pool. From TypeScript source (tests, tsx) the worker entry is the
 * `.ts` file and threads load tsx; from `dist/` it is the compiled `.js`, with no loader.
 */
export function createParserPool(options: ParserPoolOptions = {}): ParserPool {
  const fromSource = import.meta.url.endsWith('.ts');
  const filename = fileURLToPath(
    new URL(fromSource ? './parse-thread.ts' : './parse-thread.js', import.meta.url),
  );
  return new Piscina<ParseThreadTask, ParseThreadResult>({
    filename,
    maxThreads: options.maxThreads,
    minThreads: options.minThreads ?? 0,
    idleTimeout: options.idleTimeoutMs ?? 60_000,
    execArgv: fromSource ? ['--import', 'tsx'] : [],
    resourceLimits: { maxOldGenerationSizeMb: options.maxOldGenerationSizeMb ?? 512 },
  });
}

type BatchMessage = { type: 'batch'; seq: number; findings: Finding[]; bytesRead: number };

/** What the pool knows about a batch beyond its findings. */
export interface BatchInfo {
  /** Bytes of the file read by the parser thread when the batch was sent. */
  bytesRead: number;
}

/**
 * Parses a file in the pool, calling `onBatch` once per batch, in order, never concurrently.
 * The worker waits for `onBatch` to settle before running more than `maxInFlight` batches ahead.
 * Rejects with a ParseError (match on `name`/`code`) for broken or unsupported scans; if
 * `onBatch` throws, the worker is told to stop and its error is rethrown.
 */
export async function parseFileInPool(
  pool: ParserPool,
  request: ParseFileRequest,
  onBatch: (batch: Finding[], info: BatchInfo) => Promise<void>,
): Promise<ParseResult> {
  return runInPool(pool, { ...request }, [], onBatch);
}

/**
 * {@link parseFileInPool} for a file with no local path (object storage): `source`'s bytes
 * are carried into the thread over a port (`byte-port.ts`), one chunk at a time. A source that
 * fails fails the parse with its error (the job is then retried).
 */
export async function parseStreamInPool(
  pool: ParserPool,
  source: AsyncIterable<Buffer | Uint8Array>,
  request: ParseStreamRequest,
  onBatch: (batch: Finding[], info: BatchInfo) => Promise<void>,
): Promise<ParseResult> {
  const bytes = new MessageChannel();
  let sourceError: unknown = null;
  const served = serveBytePort(bytes.port1, source).catch((err: unknown) => {
    sourceError = err;
  });
  try {
    return await runInPool(pool, { ...request, input: bytes.port2 }, [bytes.port2], onBatch);
  } catch (err) {
    throw sourceError ?? err;
  } finally {
    bytes.port1.close();
    await served;
  }
}

async function runInPool(
  pool: ParserPool,
  request: DistributiveOmit<ParseThreadTask, 'port'>,
  transfer: MessagePort[],
  onBatch: (batch: Finding[], info: BatchInfo) => Promise<void>,
): Promise<ParseResult> {
  const { port1, port2 } = new MessageChannel();
  let chain: Promise<void> = Promise.resolve();
  let consumerError: unknown = null;
  port1.on('message', (msg: BatchMessage) => {
    chain = chain.then(async () => {
      if (consumerError !== null) return;
      try {
        await onBatch(msg.findings, { bytesRead: msg.bytesRead });
        port1.postMessage({ type: 'ack', seq: msg.seq });
      } catch (err) {
        consumerError = err;
        port1.postMessage({ type: 'abort' });
      }
    });
  });
  try {
    const task = { ...request, port: port2 } as ParseThreadTask;
    let outcome: ParseThreadResult;
    try {
      outcome = await pool.run(task, { transferList: [port2, ...transfer] });
    } finally {
      // Never settle while the caller's onBatch is still running (e.g. the thread crashed mid-file).
      await chain;
    }
    if (consumerError !== null) throw consumerError;
    if (outcome.ok) return outcome.result;
    if ('error' in outcome) throw new ParseError(outcome.error.code, outcome.error.message, outcome.error);
    throw new Error('parse aborted');
  } finally {
    port1.close();
  }
}
