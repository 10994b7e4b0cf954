/**
 * Piscina task entry: parses one stored scan file in a worker thread and streams finding batches
 * to the main thread over a MessagePort (docs/operations.md#processes, docs/ingestion.md#parsing). Default export is required by Piscina.
 *
 * Protocol on the port (plain objects only, so nothing depends on class identity):
 *   worker → main  { type: 'batch', seq, findings }
 *   main → worker  { type: 'ack', seq }      after the batch is persisted
 *   main → worker  { type: 'abort' }         the consumer failed; stop reading
 * At most `maxInFlight` batches are unacknowledged, so a slow database pauses the file read.
 */
import { createReadStream } from 'node:fs';
import { ParseError, parseScan, type ScanFormat } from '../parsers/index.js';
import { readBytePort } from './byte-port.js';
import type { ParseThreadResult, ParseThreadTask } from './parse-task.js';

export type { ParseThreadResult, ParseThreadTask } from './parse-task.js';

type PortMessage = { type: 'ack'; seq: number } | { type: 'abort' };

/**
 * Parses `task.path` (or the bytes arriving on `task.input`) and streams its batches over
 * `task.port`; see the protocol above.
 */
export default async function parseThread(task: ParseThreadTask): Promise<ParseThreadResult> {
  if ('input' in task && task.input) {
    let read = 0;
    const counted = (async function* (input) {
      for await (const chunk of readBytePort(input)) {
        read += chunk.length;
        yield chunk;
      }
    })(task.input);
    return streamBatches(
      task,
      counted,
      { format: task.format ?? null, gzip: task.gzip ?? 'auto' },
      () => read,
    );
  }
  const source = createReadStream(task.path!, { highWaterMark: 64 * 1024 });
  try {
    // bytesRead: how far into the file the parser has read (progress; read-ahead included).
    return await streamBatches(
      task,
      source,
      { format: task.format ?? null, gzip: task.gzip ?? 'auto' },
      () => source.bytesRead,
    );
  } finally {
    source.destroy();
  }
}

/**
 * Parses `source` and posts its batches on `task.port` with the protocol above (at most
 * `maxInFlight` unacknowledged; stops on abort), then waits for the last acknowledgement so the
 * result never overtakes its batches. `bytesRead()` is the progress sent with each batch. Closes
 * the port. Shared by every thread entry that speaks this protocol.
 */
export async function streamBatches(
  task: Pick<ParseThreadTask, 'port' | 'maxInFlight' | 'batchSize' | 'limits' | 'uploadAsset'>,
  source: AsyncIterable<Buffer>,
  options: { format: ScanFormat | null; gzip: boolean | 'auto' },
  bytesRead: () => number,
): Promise<ParseThreadResult> {
  const { port } = task;
  const maxInFlight = Math.max(1, task.maxInFlight ?? 2);
  let acked = -1;
  let aborted = false;
  let wake: (() => void) | null = null;
  port.on('message', (msg: PortMessage) => {
    if (msg.type === 'ack') acked = Math.max(acked, msg.seq);
    else aborted = true;
    wake?.();
  });
  let seq = 0;
  try {
    const parse = parseScan(source, {
      format: options.format,
      gzip: options.gzip,
      batchSize: task.batchSize,
      limits: task.limits,
      uploadAsset: task.uploadAsset ?? null,
    });
    for await (const findings of parse) {
      while (!aborted && seq - acked > maxInFlight) await new Promise<void>((resolve) => (wake = resolve));
      if (aborted) return { ok: false, aborted: true };
      port.postMessage({ type: 'batch', seq: seq++, findings, bytesRead: bytesRead() });
    }
    while (!aborted && acked < seq - 1) await new Promise<void>((resolve) => (wake = resolve));
    return aborted ? { ok: false, aborted: true } : { ok: true, result: parse.result! };
  } catch (err) {
    // A broken scan is an expected outcome, reported as a plain object; anything else is a bug
    // and rejects the task so the pool's error path (and its logs) see it.
    if (err instanceof ParseError) return { ok: false, error: err.toObject() };
    throw err;
  } finally {
    port.close();
  }
}
