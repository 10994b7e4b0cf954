import { unparseable } from '../parse-error.js';
import type { ParserContext } from '../format-parser.js';
import type { FindingDraft } from '../types.js';
import { jsonParseError } from './json-bytes.js';
import { formatSize } from './json-tokenizer.js';
import { recordLimit, sniffJson, take, type JsonHandler } from './walk-json.js';

const ROOT: readonly (string | number)[] = [];

/**
 * Streams JSON Lines: each non-blank line is cut out at its newline (a JSON text never holds a
 * raw newline) and `JSON.parse`d, and its value is passed to `handler.onValue` at the root path.
 * Limits as for a JSON document: a line over the record limit is refused before it is parsed, and
 * a line long enough to break the nesting or string limit is checked on its parsed value.
 */
export async function* walkJsonLines(
  chunks: AsyncIterable<Buffer>,
  handler: JsonHandler,
  ctx: ParserContext,
): AsyncGenerator<FindingDraft[], void, undefined> {
  const maxLine = recordLimit(ctx);
  const { maxDepth, maxTextBytes } = ctx.limits;
  let line = 0;
  let held: Buffer[] = [];
  let heldBytes = 0;
  let seen = false;

  const parseLine = (input: string, bytes: number): void => {
    let text = input;
    line++;
    if (bytes > maxLine) throw tooLarge(line, maxLine);
    if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (isBlank(text)) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw jsonParseError(err, text, line, 1);
    }
    // Only a line longer than a limit can break it: most lines are never walked.
    if (bytes > maxDepth || bytes > maxTextBytes) checkValue(value, line, maxDepth, maxTextBytes);
    handler.onValue(ROOT, value);
  };

  for await (const chunk of chunks) {
    if (chunk.length === 0) continue;
    let start = 0;
    if (!seen) {
      sniffJson(chunk);
      seen = true;
    }
    for (let nl = chunk.indexOf(0x0a, start); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      if (held.length === 0) parseLine(chunk.toString('utf8', start, nl), nl - start);
      else {
        held.push(chunk.subarray(start, nl));
        const bytes = heldBytes + nl - start;
        const text = bytes > maxLine ? '' : Buffer.concat(held).toString('utf8');
        held = [];
        heldBytes = 0;
        parseLine(text, bytes);
      }
      start = nl + 1;
    }
    if (start < chunk.length) {
      held.push(chunk.subarray(start));
      heldBytes += chunk.length - start;
      if (heldBytes > maxLine) throw tooLarge(line + 1, maxLine);
    }
    if (handler.out.length > 0) yield take(handler);
  }
  if (!seen) throw unparseable('The file is empty.');
  if (held.length > 0) parseLine(Buffer.concat(held).toString('utf8'), heldBytes);
  handler.end?.();
  if (handler.out.length > 0) yield take(handler);
}

function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

function tooLarge(line: number, max: number) {
  return unparseable(
    `A JSON record at line ${line}, column 1 is larger than the ${formatSize(max)} limit.`,
    line,
    1,
  );
}

/** The nesting and string-length limits, on a parsed value (strings counted in characters). */
function checkValue(root: unknown, line: number, maxDepth: number, maxText: number): void {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.length > maxText)
        throw unparseable(
          `A JSON string near line ${line} exceeds the ${formatSize(maxText)} size limit.`,
          line,
          null,
        );
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > maxDepth)
      throw unparseable(`JSON nesting is deeper than the limit of ${maxDepth} levels.`, line, null);
    if (Array.isArray(value)) for (const v of value) stack.push([v, depth + 1]);
    else
      for (const [k, v] of Object.entries(value)) {
        if (k.length > maxText) stack.push([k, depth]);
        stack.push([v, depth + 1]);
      }
  }
}
