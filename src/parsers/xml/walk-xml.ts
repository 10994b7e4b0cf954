import { TextDecoder } from 'node:util';
import { unparseable } from '../parse-error.js';
import type { ParserContext } from '../format-parser.js';
import type { FindingDraft } from '../types.js';
import { XmlWalker, type XmlHandler } from './xml-walker.js';

const SINGLE_BYTE_ENCODINGS = /^(iso-8859-1|latin1|us-ascii|windows-1252|cp1252)$/i;

/**
 * Rejects input that is plainly not XML with a message that says what it is, before the tokenizer
 * produces a less helpful one ("text data outside of root node").
 */
function sniff(first: Buffer): TextDecoder {
  const sample = first.subarray(0, 512);
  if (sample.includes(0)) throw unparseable('The file is binary data, not XML.', 1, 1);
  let text = sample.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const lead = text.trimStart()[0];
  if (lead === '{' || lead === '[') throw unparseable('The file is JSON, not XML.', 1, 1);
  if (lead !== undefined && lead !== '<')
    throw unparseable('The file does not start with an XML element or declaration.', 1, 1);
  const encoding = /^\s*<\?xml[^>]*encoding=["']([^"']+)["']/.exec(text)?.[1];
  // fatal: false replaces invalid UTF-8 with U+FFFD rather than failing a whole scan over one byte.
  return new TextDecoder(encoding && SINGLE_BYTE_ENCODINGS.test(encoding) ? 'windows-1252' : 'utf-8', {
    fatal: false,
    ignoreBOM: false,
  });
}

/**
 * Drives `handler` over the byte chunks, yielding the drafts completed by each chunk. Because it
 * only pulls the next chunk when the consumer asks for more, a slow consumer pauses the source.
 */
export async function* walkXml(
  chunks: AsyncIterable<Buffer>,
  handler: XmlHandler,
  ctx: ParserContext,
): AsyncGenerator<FindingDraft[], void, undefined> {
  try {
    yield* drive(chunks, handler, ctx);
  } finally {
    await handler.dispose?.();
  }
}

async function* drive(
  chunks: AsyncIterable<Buffer>,
  handler: XmlHandler,
  ctx: ParserContext,
): AsyncGenerator<FindingDraft[], void, undefined> {
  const walker = new XmlWalker(handler, ctx.limits, ctx.xmlEngine);
  let decoder: TextDecoder | null = null;
  for await (const chunk of chunks) {
    if (chunk.length === 0) continue;
    decoder ??= sniff(chunk);
    walker.write(decoder.decode(chunk, { stream: true }));
    if (handler.afterChunk) await handler.afterChunk();
    if (handler.out.length > 0) {
      const ready = handler.out;
      handler.out = [];
      yield ready;
    }
  }
  if (decoder) walker.write(decoder.decode());
  walker.end();
  if (handler.out.length > 0) {
    const ready = handler.out;
    handler.out = [];
    yield ready;
  }
  if (handler.finish) yield* handler.finish();
}
