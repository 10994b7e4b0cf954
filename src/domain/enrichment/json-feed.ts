import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Assembler from 'stream-json/assembler.js';
import { jsonParser, type Token } from 'stream-json/parser.js';
import { malformed } from './import-error.js';
import type { OpenedSource } from './source.js';

/**
 * Streaming reader for the feed documents of CISA KEV and NVD API 2.0: one top-level object
 * with a few scalar header fields and one big array of entries. Entries are assembled one at a
 * time, so memory stays bounded by the largest entry, not the document.
 */
export type JsonFeedEvent =
  { kind: 'field'; key: string; value: unknown } | { kind: 'item'; index: number; value: unknown };

export interface JsonFeedOptions {
  /** Top-level keys whose values are reported as `field` events (in document order). */
  fields: readonly string[];
  /** The top-level key of the entry array; each element becomes an `item` event. */
  itemsKey: string;
  /**
   * Keys left out of the assembled entries, at one nesting depth (1: keys of the entry itself,
   * 2: keys of an object inside it). Their values are tokenized but never built.
   */
  skipInItems?: { depth: number; keys: ReadonlySet<string> };
}

export interface JsonFeedSummary {
  /** Whether the document had the entry array at all (an empty one counts). */
  sawItems: boolean;
  items: number;
}

/**
 * stream-json's bare tokenizer is a stream-chain "flushable": text in, `none` or `many(tokens)`
 * (or one token) out, and `none` in to flush. Calling it directly instead of through
 * `parser.asStream()` spares every token a trip through Node's object-mode stream machinery,
 * which made parsing NVD dumps more than twice as slow in our measurements. The markers are registered symbols, so no import of
 * stream-chain is needed; anything else fails loudly (see `feed`).
 */
type Tokenizer = (input: string | symbol) => unknown;
const NONE = Symbol.for('object-stream.none');
const MANY = Symbol.for('object-stream.many');

type Mode = 'start' | 'top' | 'skip' | 'field' | 'items' | 'item' | 'after';
const VALUE_STARTS = new Set([
  'startObject',
  'startArray',
  'stringValue',
  'numberValue',
  'nullValue',
  'trueValue',
  'falseValue',
]);

/** Bytes → feed events. Invariant: the tokenizer packs keys, strings and numbers and does not stream them. */
class FeedReader extends Transform {
  readonly summary: JsonFeedSummary = { sawItems: false, items: 0 };
  private readonly tokenize = jsonParser({ streamValues: false }) as unknown as Tokenizer;
  private readonly decoder = new StringDecoder('utf8');
  private mode: Mode = 'start';
  private key: string | null = null;
  private skipDepth = 0;
  private asm: Assembler | null = null;
  private atStart = true;
  /** Inside an item: 1 after a skipped key (its value is next), then the nesting depth of that value. */
  private itemSkip = 0;
  private itemSkipPending = false;

  constructor(private readonly options: JsonFeedOptions) {
    super({ readableObjectMode: true });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    try {
      let text = this.decoder.write(chunk);
      if (this.atStart && text.length > 0) {
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
        this.atStart = false;
      }
      if (text.length > 0) this.feed(this.tokenize(text));
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      const rest = this.decoder.end();
      if (rest.length > 0) this.feed(this.tokenize(rest));
      this.feed(this.tokenize(NONE));
      if (this.mode !== 'after') throw malformed('the document ended early');
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  private feed(out: unknown): void {
    if (out === NONE || out === undefined) return;
    const o = out as { [MANY]?: number; values?: Token[]; name?: unknown };
    if (o[MANY] === 1 && Array.isArray(o.values)) {
      for (const token of o.values) this.consume(token);
    } else if (typeof o.name === 'string') {
      this.consume(out as Token);
    } else {
      throw new Error('stream-json tokenizer returned an unexpected value: incompatible stream-json version');
    }
  }

  private consume(token: Token): void {
    switch (this.mode) {
      case 'start':
        if (token.name !== 'startObject') throw malformed('expected a JSON object at the top level');
        this.mode = 'top';
        return;
      case 'top':
        this.top(token);
        return;
      case 'skip':
        if (token.name === 'startObject' || token.name === 'startArray') this.skipDepth++;
        else if (token.name === 'endObject' || token.name === 'endArray') this.skipDepth--;
        if (this.skipDepth === 0) this.mode = 'top';
        return;
      case 'field':
        this.asm!.consume(token);
        if (this.asm!.done) {
          this.push({ kind: 'field', key: this.key, value: this.asm!.current });
          this.mode = 'top';
        }
        return;
      case 'items':
        if (token.name === 'endArray') {
          this.mode = 'top';
          return;
        }
        this.asm = new Assembler();
        this.asm.consume(token);
        if (this.asm.done) this.pushItem();
        else this.mode = 'item';
        return;
      case 'item':
        if (this.skipping(token)) return;
        this.asm!.consume(token);
        if (token.name === 'keyValue' && this.asm!.depth === this.options.skipInItems?.depth) {
          this.itemSkipPending = this.options.skipInItems.keys.has(token.value);
        }
        if (this.asm!.done) {
          this.pushItem();
          this.mode = 'items';
        }
        return;
      case 'after':
        return;
    }
  }

  /** Drops the value of a skipped key; the assembler keeps the key as its pending key until the next one. */
  private skipping(token: Token): boolean {
    if (this.itemSkip > 0) {
      if (token.name === 'startObject' || token.name === 'startArray') this.itemSkip++;
      else if (token.name === 'endObject' || token.name === 'endArray') this.itemSkip--;
      return true;
    }
    if (!this.itemSkipPending) return false;
    this.itemSkipPending = false;
    if (token.name === 'startObject' || token.name === 'startArray') this.itemSkip = 1;
    return true;
  }

  private top(token: Token): void {
    if (token.name === 'keyValue') {
      this.key = token.value;
      return;
    }
    if (token.name === 'endObject') {
      this.mode = 'after';
      return;
    }
    if (!VALUE_STARTS.has(token.name)) return;
    const key = this.key;
    if (key === this.options.itemsKey) {
      if (token.name !== 'startArray') throw malformed(`"${key}" is not an array`);
      this.summary.sawItems = true;
      this.mode = 'items';
    } else if (key !== null && this.options.fields.includes(key)) {
      this.asm = new Assembler();
      this.asm.consume(token);
      if (this.asm.done) this.push({ kind: 'field', key, value: this.asm.current });
      else this.mode = 'field';
    } else if (token.name === 'startObject' || token.name === 'startArray') {
      this.skipDepth = 1;
      this.mode = 'skip';
    }
  }

  private pushItem(): void {
    this.push({ kind: 'item', index: this.summary.items++, value: this.asm!.current });
  }
}

/**
 * Reads a feed document from an opened source, awaiting `onEvent` for each event (so a slow
 * database write holds the parser back instead of buffering the file). Rejects on invalid
 * JSON, on a document that is not an object, and with whatever `onEvent` throws.
 */
export async function readJsonFeed(
  source: OpenedSource,
  options: JsonFeedOptions,
  onEvent: (event: JsonFeedEvent) => Promise<void> | void,
): Promise<JsonFeedSummary> {
  const reader = new FeedReader(options);
  // Leaving the for-await destroys the upstream stages, and pipeline() then rejects with their
  // AbortError rather than with the handler's error: keep the handler's error to rethrow it.
  let failure: { error: unknown } | null = null;
  const sink = async (events: AsyncIterable<JsonFeedEvent>): Promise<void> => {
    for await (const event of events) {
      try {
        await onEvent(event);
      } catch (error) {
        failure = { error };
        throw error;
      }
    }
  };
  try {
    await pipeline(source.body, source.decode, reader, sink);
  } catch (err) {
    throw failure ? (failure as { error: unknown }).error : err;
  }
  return reader.summary;
}
