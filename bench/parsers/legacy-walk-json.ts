/**
 * The JSON walker the SARIF, CycloneDX JSON and CLI parsers used before the record scanner
 * (stream-json tokens assembled into each selected value), kept in the bench only as the
 * reference of `differential.ts`: same handlers, same drafts expected.
 */
import { TextDecoder } from 'node:util';
import { unparseable } from '../../src/parsers/parse-error.js';
import type { ParserContext } from '../../src/parsers/format-parser.js';
import type { FindingDraft } from '../../src/parsers/types.js';
import { JsonPathAssembler, type JsonPathHandlers } from './legacy-json-path-assembler.js';
import { JsonTokenizer } from '../../src/parsers/json/json-tokenizer.js';

/** A JSON format: path callbacks that push drafts into `out`, plus an end-of-document hook. */
export interface JsonHandler extends JsonPathHandlers {
  out: FindingDraft[];
  /** Called once the document is complete; may push final drafts (e.g. buffered SARIF results). */
  end?(): void;
}

function sniff(first: Buffer): void {
  const sample = first.subarray(0, 512);
  if (sample.includes(0)) throw unparseable('The file is binary data, not JSON.', 1, 1);
  const lead = sample
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart()[0];
  if (lead === '<') throw unparseable('The file is XML, not JSON.', 1, 1);
}

/**
 * Streams JSON through the incremental tokenizer and a path assembler, yielding the drafts each
 * input chunk completed. Pull-driven like `walkXml`, so the consumer's pace bounds read-ahead.
 */
export async function* walkJsonTokens(
  chunks: AsyncIterable<Buffer>,
  handler: JsonHandler,
  ctx: ParserContext,
  options: { jsonStreaming?: boolean } = {},
): AsyncGenerator<FindingDraft[], void, undefined> {
  // jsonStreaming accepts a sequence of top-level values: JSON Lines.
  const tokenizer = new JsonTokenizer(ctx.limits.maxTextBytes, options.jsonStreaming ?? false);
  // A record may hold several long strings; allow four text limits per selected value.
  const assembler = new JsonPathAssembler(handler, ctx.limits.maxTextBytes * 4, ctx.limits.maxDepth);
  const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });
  let seen = false;
  const take = (): FindingDraft[] | null => {
    if (handler.out.length === 0) return null;
    const ready = handler.out;
    handler.out = [];
    return ready;
  };
  for await (const chunk of chunks) {
    if (chunk.length === 0) continue;
    if (!seen) sniff(chunk);
    seen = true;
    for (const token of tokenizer.write(decoder.decode(chunk, { stream: true }))) assembler.push(token);
    const ready = take();
    if (ready) yield ready;
  }
  if (!seen) throw unparseable('The file is empty.');
  for (const token of tokenizer.write(decoder.decode())) assembler.push(token);
  for (const token of tokenizer.end()) assembler.push(token);
  handler.end?.();
  const ready = take();
  if (ready) yield ready;
}
