import { unparseable, type ParseError } from '../parse-error.js';

/** Escape state of a string being scanned, carried from one chunk to the next. */
export interface StringScan {
  /** The previous chunk ended on a backslash that escapes this chunk's first byte. */
  escape: boolean;
}

/**
 * Index of the quote that closes the JSON string whose content starts at `from`, or -1 when the
 * string goes on past the end of `buf` (then `state.escape` says whether the next chunk's first
 * byte is escaped). A quote is closing when an even number of backslashes precedes it: `indexOf`
 * finds the candidates, so long strings cost one native search, not a JavaScript loop per byte.
 */
export function scanStringEnd(buf: Buffer, from: number, state: StringScan): number {
  let pos = from;
  if (state.escape) {
    if (pos >= buf.length) return -1;
    state.escape = false;
    pos++;
  }
  for (;;) {
    const q = buf.indexOf(0x22, pos);
    if (q < 0) {
      let k = buf.length - 1;
      while (k >= pos && buf[k] === 0x5c) k--;
      state.escape = (buf.length - 1 - k) % 2 === 1;
      return -1;
    }
    let k = q - 1;
    while (k >= pos && buf[k] === 0x5c) k--;
    if ((q - 1 - k) % 2 === 0) return q;
    pos = q + 1;
  }
}

/**
 * A ParseError for text that `JSON.parse` refused. V8's message quotes the input; only its
 * reason is kept (the rest could be any part of the file), with the line and column worked out
 * from the position it names, relative to where the text starts in the file.
 */
export function jsonParseError(err: unknown, text: string, line: number, column: number): ParseError {
  const message = err instanceof Error ? err.message : String(err);
  const at = /at position (\d+)/.exec(message);
  let reason = message
    .replace(/,? ".*" is not valid JSON$/s, '')
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/\s*\(line \d+ column \d+\)$/, '');
  if (/^Unexpected end of JSON input/.test(message)) reason = 'unexpected end of the value';
  if (at) {
    const pos = Number(at[1]);
    const before = text.slice(0, pos);
    const nl = before.lastIndexOf('\n');
    if (nl >= 0) {
      line += before.split('\n').length - 1;
      column = Buffer.byteLength(before.slice(nl + 1)) + 1;
    } else column += Buffer.byteLength(before);
  }
  return unparseable(`Invalid JSON near line ${line}, column ${column}: ${reason}.`, line, column);
}
