/**
 * Piscina task entry for one segment of a split file (`split-plan.ts`, bench experiment): reads the
 * segment's byte ranges in order as one document and streams its batches over a MessagePort with
 * the same protocol as `parse-thread.ts` (batch / ack / abort, at most `maxInFlight` unacknowledged).
 * `bytesRead` is reported as a file offset inside the segment's records, so progress across
 * segments delivered in order never goes backwards. Default export is required by Piscina.
 */
import { createReadStream } from 'node:fs';
import type { MessagePort } from 'node:worker_threads';
import type { ScanFormat } from '../../src/parsers/index.js';
import type { ByteRange } from './split-plan.js';
import { streamBatches, type ParseThreadResult } from '../../src/workers/parse-thread.js';
import type { ParseFileRequest } from '../../src/workers/parser-pool.js';

/** One segment to parse; `format` is the one detected for the whole file. */
export interface ParseRangeTask extends Omit<ParseFileRequest, 'format' | 'gzip'> {
  format: ScanFormat;
  ranges: ByteRange[];
  /** The file bytes where this segment's own records start and end. */
  start: number;
  end: number;
  port: MessagePort;
}

/** Parses the segment described by `task` and streams its batches over `task.port`. */
export default async function parseRangeThread(task: ParseRangeTask): Promise<ParseThreadResult> {
  let offset = task.start;
  const source = (async function* () {
    for (const [from, to] of task.ranges) {
      if (to <= from) continue;
      const own = from < task.end && to > task.start;
      const stream = createReadStream(task.path, { start: from, end: to - 1, highWaterMark: 256 * 1024 });
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        if (own) offset = Math.min(task.end, Math.max(offset, from) + chunk.length);
        yield chunk;
      }
    }
  })();
  try {
    return await streamBatches(task, source, { format: task.format, gzip: false }, () => offset);
  } finally {
    await source.return(undefined);
  }
}
