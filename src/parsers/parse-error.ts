/**
 * Parser errors. Codes are a subset of the API's closed set (docs/api.md#errors): a recognised but broken
 * file is `unparseable_scan` (422), an unrecognised one `unsupported_format` (415).
 */

/** Stable error codes a parser can raise. */
export type ParseErrorCode = 'unparseable_scan' | 'unsupported_format';

/** Plain-object form that survives structured clone across the Piscina thread boundary. */
export interface ParseErrorObject {
  name: 'ParseError';
  code: ParseErrorCode;
  message: string;
  line: number | null;
  column: number | null;
}

/**
 * A scan that cannot be parsed. The message is safe to show to the uploader: it never contains
 * stack traces or file system paths, only what is wrong and where.
 */
export class ParseError extends Error {
  override readonly name = 'ParseError';
  readonly code: ParseErrorCode;
  readonly line: number | null;
  readonly column: number | null;

  constructor(
    code: ParseErrorCode,
    message: string,
    position?: { line?: number | null; column?: number | null },
  ) {
    super(message);
    this.code = code;
    this.line = position?.line ?? null;
    this.column = position?.column ?? null;
  }

  /** Plain object for postMessage; match on `name`/`code` on the other side, never instanceof. */
  toObject(): ParseErrorObject {
    return {
      name: 'ParseError',
      code: this.code,
      message: this.message,
      line: this.line,
      column: this.column,
    };
  }
}

/** Shorthand for the common "recognised but broken" case. */
export function unparseable(message: string, line?: number | null, column?: number | null): ParseError {
  return new ParseError('unparseable_scan', message, { line, column });
}

/** True for a ParseError or its plain-object form, whichever side of a thread boundary it came from. */
export function isParseErrorLike(value: unknown): value is ParseErrorObject {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return v.name === 'ParseError' && (v.code === 'unparseable_scan' || v.code === 'unsupported_format');
}

/**
 * Converts anything thrown during a parse into a ParseError. Unknown errors from the underlying
 * tokenizers become `unparseable_scan` with only their first line kept, so no internal detail leaks.
 */
export function toParseError(err: unknown, fallbackPosition?: { line: number; column: number }): ParseError {
  if (err instanceof ParseError) return err;
  if (isParseErrorLike(err)) return new ParseError(err.code, err.message, err);
  const raw = err instanceof Error ? err.message : String(err);
  const firstLine = raw.split('\n')[0]?.slice(0, 300) ?? 'unknown error';
  return new ParseError(
    'unparseable_scan',
    `The scan file could not be parsed: ${firstLine}`,
    fallbackPosition,
  );
}
