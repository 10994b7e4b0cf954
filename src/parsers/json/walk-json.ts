import { unparseable } from '../parse-error.js';
import type { ParserContext } from '../format-parser.js';
import type { FindingDraft } from '../types.js';
import { JsonRecordScanner, type JsonRecordHandlers } from './json-record-scanner.js';

export type { JsonPath } from './json-record-scanner.js';

/** A JSON format: path callbacks that push drafts into `out`, plus an end-of-document hook. */
export interface JsonHandler extends JsonRecordHandlers {
  out: FindingDraft[];
  /** Called once the document is complete; may push final drafts (e.g. buffered SARIF results). */
  end?(): void;
}

/** Refuses binary data and XML before any JSON error could describe them less clearly. */
export function sniffJson(first: Buffer): void {
  const sample = first.subarray(0, 512);
  if (sample.includes(0)) throw unparseable('The file is binary data, not JSON.', 1, 1);
  const lead = sample
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart()[0];
  if (lead === '<') throw unparseable('The file is XML, not JSON.', 1, 1);
}

/**
 * A record may hold several long strings: it is allowed four text limits (UTF-8 bytes), as the
 * token-based walker allowed four text limits of characters.
 */
export const recordLimit = (ctx: ParserContext): number => ctx.limits.maxTextBytes * 4;

/**
 * Streams a JSON document through {@link JsonRecordScanner}: the values the handler selects are
 * cut out of the bytes and `JSON.parse`d one at a time, so memory is the largest record, not the
 * document. Yields the drafts each input chunk completed; pull-driven like `walkXml`, so the
 * consumer's pace bounds read-ahead.
 */
export async function* walkJson(
  chunks: AsyncIterable<Buffer>,
  handler: JsonHandler,
  ctx: ParserContext,
): AsyncGenerator<FindingDraft[], void, undefined> {
  const scanner = new JsonRecordScanner(handler, {
    maxDepth: ctx.limits.maxDepth,
    maxTokenBytes: ctx.limits.maxTextBytes,
    maxRecordBytes: recordLimit(ctx),
  });
  let seen = false;
  for await (const chunk of chunks) {
    if (chunk.length === 0) continue;
    if (!seen) sniffJson(chunk);
    seen = true;
    scanner.write(chunk);
    if (handler.out.length > 0) yield take(handler);
  }
  if (!seen) throw unparseable('The file is empty.');
  scanner.end();
  handler.end?.();
  if (handler.out.length > 0) yield take(handler);
}

/** Hands over the drafts collected so far. */
export function take(handler: { out: FindingDraft[] }): FindingDraft[] {
  const ready = handler.out;
  handler.out = [];
  return ready;
}
