import { tmpdir } from 'node:os';
import { completeFinding } from './complete-finding.js';
import { DETECT_HEAD_BYTES, detectFormat } from './detect.js';
import type { ParserContext } from './format-parser.js';
import { PeekableInput, type ByteSource } from './input-stream.js';
import { ParseError, isParseErrorLike, toParseError } from './parse-error.js';
import type { Finding, ParseResult } from './finding.js';
import { UNSUPPORTED_FORMAT_MESSAGE, formatModule, type ScanFormat } from './registry.js';
import { ScopeCollector } from './scope.js';
import { DEFAULT_LIMITS, type ParseLimits } from './types.js';
import type { XmlEngineName } from './xml/xml-engine.js';

/** Options of {@link parseScan}. */
export interface ParseScanOptions {
  /** Forced format (the route's `format` query); detected from the first 64 KiB when absent. */
  format?: ScanFormat | null;
  /** Findings per batch. @defaultValue 500 */
  batchSize?: number;
  /** Overrides of {@link DEFAULT_LIMITS}. */
  limits?: Partial<ParseLimits>;
  /** `true` forces gunzip, `false` forbids it; `'auto'` gunzips when the input starts with the gzip magic. @defaultValue 'auto' */
  gzip?: boolean | 'auto';
  /** SAX tokenizer for XML formats. @defaultValue 'saxes' */
  xmlEngine?: XmlEngineName;
  /** Where the Qualys asset-report join may spill. @defaultValue os.tmpdir() */
  tmpDir?: string;
  /**
   * The asset the upload named (`asset=`, docs/ingestion.md#asset-context): findings without a host of their own
   * are fingerprinted under it (see `attributedAsset`). @defaultValue null
   */
  uploadAsset?: string | null;
}

/** A running parse: iterate it once for batches; `result` is set after the last batch. */
export interface ScanParse extends AsyncIterable<Finding[]> {
  readonly result: ParseResult | null;
}

/** How a format is named in messages: its module's `aFile`. */
const aFile = (format: ScanFormat): string => formatModule(format).aFile;

const SAYS_WHAT_IT_IS = /^(?:The file looks like|The file is |Expected root element)/;

/** Default findings per batch. */
export const DEFAULT_BATCH_SIZE = 500;

/**
 * Parses a scan stream into batches of normalised findings (docs/ingestion.md#parsing, docs/ingestion.md#formats).
 *
 * Backpressure: the parse is a pull pipeline. Input is read only while the consumer is asking
 * for the next batch, so at most one batch plus the findings of one input chunk are held,
 * whatever the file size. Errors surface from the iteration as {@link ParseError} with code
 * `unsupported_format` or `unparseable_scan`.
 */
export function parseScan(source: ByteSource, options: ParseScanOptions = {}): ScanParse {
  let result: ParseResult | null = null;
  let started = false;
  const run = async function* (): AsyncGenerator<Finding[], void, undefined> {
    if (started) throw new Error('A ScanParse can be iterated only once');
    started = true;
    const input = new PeekableInput(source);
    const batchSize = Math.max(1, options.batchSize ?? DEFAULT_BATCH_SIZE);
    const limits: ParseLimits = { ...DEFAULT_LIMITS, ...options.limits };
    /** With a forced format: the format the file's first bytes say it is, when another one. */
    let mismatch: ScanFormat | null = null;
    try {
      const gzip = options.gzip ?? 'auto';
      if (gzip === true || (gzip === 'auto' && isGzip(await input.peek(2)))) input.gunzip();
      const detected = detectFormat(await input.peek(DETECT_HEAD_BYTES));
      const format = options.format ?? detected;
      if (detected !== null && detected !== format) mismatch = detected;
      if (!format) {
        throw new ParseError('unsupported_format', UNSUPPORTED_FORMAT_MESSAGE);
      }
      const ctx: ParserContext = {
        limits,
        notes: [],
        xmlEngine: options.xmlEngine ?? 'saxes',
        tmpDir: options.tmpDir ?? tmpdir(),
        scope: new ScopeCollector(),
      };
      let recordIndex = 0;
      let pending: Finding[] = [];
      for await (const drafts of formatModule(format).parse(input.chunks(), ctx)) {
        for (const d of drafts) {
          const f = completeFinding(d, format, recordIndex++, limits, options.uploadAsset);
          ctx.scope.addFinding(f);
          pending.push(f);
        }
        while (pending.length >= batchSize) {
          const batch = pending.length === batchSize ? pending : pending.slice(0, batchSize);
          pending = pending.length === batchSize ? [] : pending.slice(batchSize);
          yield batch;
        }
      }
      if (pending.length > 0) yield pending;
      if (recordIndex === 0 && mismatch !== null) {
        // Parsed as the forced format, another format's file has nothing that format's parser
        // looks for: say so rather than complete with no findings (docs/ingestion.md#refused-uploads).
        throw new ParseError(
          'unparseable_scan',
          `The file looks like ${aFile(mismatch)}, not ${aFile(format)}: read as format=${format} it has no findings. Upload it without format= (it is detected as ${mismatch}) or with format=${mismatch}.`,
        );
      }
      result = {
        format,
        count: recordIndex,
        bytes: input.bytes,
        notes: ctx.notes,
        scope: ctx.scope.result(),
      };
    } catch (err) {
      // Only problems with the file's content are ParseErrors. I/O failures of the source (a
      // missing file, a dropped upload stream) and bugs propagate unchanged so that callers retry
      // them instead of marking the scan as broken.
      if (isParseErrorLike(err)) {
        const e = toParseError(err);
        // Errors that already say what the file is (its root element, JSON not XML) stand as they are.
        if (mismatch === null || SAYS_WHAT_IT_IS.test(e.message)) throw e;
        throw new ParseError(
          e.code,
          `The file looks like ${aFile(mismatch)}, not ${aFile(options.format!)} (format=${options.format!}): ${e.message}`,
          e,
        );
      }
      throw err;
    }
  };
  return {
    get result() {
      return result;
    },
    [Symbol.asyncIterator]: () => run(),
  };
}

function isGzip(head: Buffer): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/** Convenience for tests and small inputs: collects every finding. Not for large files. */
export async function parseScanToArray(
  source: ByteSource,
  options: ParseScanOptions = {},
): Promise<{ findings: Finding[]; result: ParseResult }> {
  const parse = parseScan(source, options);
  const findings: Finding[] = [];
  for await (const batch of parse) findings.push(...batch);
  return { findings, result: parse.result! };
}
