import { jsonParser, type Token } from 'stream-json/core/parser.js';
import { unparseable } from '../parse-error.js';

export type { Token as JsonToken };

/*
 * stream-json's core tokenizer is a stream-chain "flushable": call it with text to get tokens,
 * call it with the `none` symbol to flush. Both markers are registered symbols, so we use them
 * without importing stream-chain, which is not a direct dependency of this package.
 */
const NONE = Symbol.for('object-stream.none');
const MANY = Symbol.for('object-stream.many');

type Flushable = (input: string | symbol) => unknown;

function unpack(result: unknown): Token[] {
  if (typeof result === 'object' && result !== null && (result as Record<symbol, unknown>)[MANY] === 1) {
    return (result as { values: Token[] }).values;
  }
  return [];
}

/**
 * Synchronous, incremental JSON tokenizer with a bound on how much text may arrive without
 * producing a token: a single string or number longer than `maxTokenChars` would otherwise be
 * buffered whole inside the tokenizer.
 */
export class JsonTokenizer {
  private readonly fn: Flushable;
  private pendingChars = 0;
  private lineCount = 1;

  constructor(
    private readonly maxTokenChars: number,
    jsonStreaming = false,
  ) {
    this.fn = jsonParser({ packValues: true, streamValues: false, jsonStreaming }) as unknown as Flushable;
  }

  /** Feeds text and returns the tokens it completed. Throws ParseError on invalid JSON. */
  write(text: string): Token[] {
    let tokens: Token[];
    try {
      tokens = unpack(this.fn(text));
    } catch (err) {
      throw this.fail(err);
    } finally {
      this.lineCount += countNewlines(text);
    }
    if (tokens.length === 0) {
      this.pendingChars += text.length;
      if (this.pendingChars > this.maxTokenChars) {
        throw unparseable(
          `A JSON value near line ${this.lineCount} exceeds the ${formatSize(this.maxTokenChars)} size limit.`,
          this.lineCount,
        );
      }
    } else {
      this.pendingChars = 0;
      for (const t of tokens) {
        if ((t.name === 'stringValue' || t.name === 'keyValue') && t.value.length > this.maxTokenChars) {
          throw unparseable(
            `A JSON string near line ${this.lineCount} exceeds the ${formatSize(this.maxTokenChars)} size limit.`,
            this.lineCount,
          );
        }
      }
    }
    return tokens;
  }

  /** Flushes at end of input; throws ParseError when the document is incomplete. */
  end(): Token[] {
    try {
      return unpack(this.fn(NONE));
    } catch (err) {
      throw this.fail(err, 'The JSON document ends before it is complete (truncated file?)');
    }
  }

  private fail(err: unknown, override?: string) {
    const detail = err instanceof Error ? err.message.split('\n')[0] : String(err);
    return unparseable(override ?? `Invalid JSON near line ${this.lineCount}: ${detail}`, this.lineCount);
  }
}

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** "8 MiB" style sizes for error messages. */
export function formatSize(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
  if (bytes >= 1024) return `${Math.round((bytes / 1024) * 10) / 10} KiB`;
  return `${bytes} bytes`;
}
