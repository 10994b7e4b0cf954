import type { MessagePort } from 'node:worker_threads';
import type { ParseErrorObject, ParseLimits, ParseResult, ScanFormat } from '../parsers/index.js';

/**
 * The types both sides of the parser pool share: what the main thread asks (`parser-pool.ts`)
 * and what the thread answers (`parse-thread.ts`, whose header documents the port protocol).
 * Kept apart so neither side imports the other.
 */

/** A stored scan file to parse. */
export interface ParseFileRequest {
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

/** The task posted to the pool: the request, and the port batches go back on (in the transfer list). */
export interface ParseThreadTask extends ParseFileRequest {
  port: MessagePort;
}

/** What the task resolves to; errors in the scan itself are values, not exceptions. */
export type ParseThreadResult =
  { ok: true; result: ParseResult } | { ok: false; error: ParseErrorObject } | { ok: false; aborted: true };
