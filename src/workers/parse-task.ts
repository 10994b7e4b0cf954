import type { MessagePort } from 'node:worker_threads';
import type { ParseErrorObject, ParseLimits, ParseResult, ScanFormat } from '../parsers/index.js';

/**
 * The types both sides of the parser pool share: what the main thread asks (`parser-pool.ts`)
 * and what the thread answers (`parse-thread.ts`, whose header documents the port protocol).
 * Kept apart so neither side imports the other.
 */

/** A stored scan file to parse. */
export interface ParseFileRequest {
  /** A local file the thread opens itself (the disk driver). */
  path: string;
  /** Forced format; detected from content when absent. */
  format?: ScanFormat | null;
  /** `true` when the upload was stored gzip-compressed; `'auto'` sniffs the magic bytes. */
  gzip?: boolean | 'auto';
  batchSize?: number;
  limits?: Partial<ParseLimits>;
  /** Unacknowledged batches allowed in flight. @defaultValue 2 */
  maxInFlight?: number;
  /** The asset the upload named; see `ParseScanOptions.uploadAsset`. */
  uploadAsset?: string | null;
}

/** A stored scan to parse from a stream (object storage): the bytes arrive over a port. */
export type ParseStreamRequest = Omit<ParseFileRequest, 'path'>;

/**
 * The task posted to the pool: the request, the port batches go back on, and for a streamed
 * file the port its bytes come in on (`byte-port.ts`); both in the transfer list.
 */
export type ParseThreadTask = (
  ParseFileRequest | (ParseStreamRequest & { path?: undefined; input: MessagePort })
) & {
  port: MessagePort;
};

/** What the task resolves to; errors in the scan itself are values, not exceptions. */
export type ParseThreadResult =
  { ok: true; result: ParseResult } | { ok: false; error: ParseErrorObject } | { ok: false; aborted: true };
