import { unparseable } from '../parse-error.js';
import { formatSize } from './json-tokenizer.js';
import { jsonParseError, scanStringEnd, type StringScan } from './json-bytes.js';
import type { RecordPicker } from './json-record-picker.js';

/** Path of a JSON value: object keys and array indices from the root. */
export type JsonPath = readonly (string | number)[];

/** Callbacks of {@link JsonRecordScanner}. */
export interface JsonRecordHandlers {
  /**
   * Return true to have the value at `path` parsed whole and passed to `onValue`; or a
   * {@link RecordPicker} to have only its properties read out of an object there (and the value
   * parsed whole whenever the picker cannot be sure, see its contract).
   */
  select(path: JsonPath): boolean | RecordPicker;
  onValue(path: JsonPath, value: unknown): void;
  /** Called when an object or array that was not selected closes, with its own path. */
  onContainerEnd?(path: JsonPath): void;
}

/** Bounds that turn hostile input into a ParseError. */
export interface JsonScanLimits {
  /** Containers open at once, outside and inside records. */
  maxDepth: number;
  /** UTF-8 bytes of one string or literal, escapes counted as written. */
  maxTokenBytes: number;
  /** UTF-8 bytes of one selected record. */
  maxRecordBytes: number;
}

// Grammar states between tokens, outside the selected records.
const VALUE = 0;
const VALUE_OR_END = 1;
const KEY_OR_END = 2;
const KEY = 3;
const COLON = 4;
const COMMA_OR_END = 5;
const DONE = 6;

// The token in progress, possibly across chunks.
const NONE = 0;
const STRING = 1;
const LITERAL = 2;
const RECORD = 3;

// What a finished string or literal is for.
const SKIP = 0;
const SELECTED = 1;
const AS_KEY = 2;

const BOM = [0xef, 0xbb, 0xbf];

/**
 * Finds the selected values of a JSON document in its bytes and hands each to `JSON.parse`
 * (a SARIF result, a CycloneDX component), so the cost per byte of a record is a bracket count
 * and V8's own parser, not a token object per value.
 *
 * Outside the selected values the scanner is a full validating state machine that keeps the
 * current path (object keys, array indices); that part of a scan file is small. Inside a record
 * it only follows strings (jumping to the next quote with `indexOf`, escapes respected, also
 * across chunk boundaries) and bracket depth, counting newlines as it goes so that every error
 * names a line and a column (in bytes from the start of the line). `JSON.parse` validates the
 * record itself. Records, strings and nesting are bounded by {@link JsonScanLimits}.
 */
export class JsonRecordScanner {
  private state = VALUE;
  private readonly kinds: number[] = []; // 0 object, 1 array
  private readonly keys: (string | number | null)[] = [];
  private token = NONE;
  private role = SKIP;
  private readonly str: StringScan = { escape: false };
  private pieces: Buffer[] = [];
  private pieceBytes = 0;
  private tokenPath: JsonPath = [];
  private tokenLine = 1;
  private tokenColumn = 1;
  private depth = 0; // inside a record
  private inString = false; // inside a record
  private stringBytes = 0;
  private offset = 0; // absolute offset of the current chunk
  private line = 1;
  private lineStart = 0; // absolute offset of the current line's first byte
  private bomSeen = 0;
  private segStart = 0; // where the open token starts in the current chunk

  constructor(
    private readonly handlers: JsonRecordHandlers,
    private readonly limits: JsonScanLimits,
  ) {}

  /** Scans one chunk; selected values it completes are passed to `onValue` before it returns. */
  write(buf: Buffer): void {
    let i = 0;
    const len = buf.length;
    // A byte order mark may arrive split over the first chunks.
    while (this.bomSeen < 3 && i < len) {
      if (this.offset + i === this.bomSeen && buf[i] === BOM[this.bomSeen]) {
        i++;
        if (++this.bomSeen === 3) this.lineStart = 3;
      } else if (this.bomSeen > 0) throw this.invalid(buf, i, 'the byte order mark is broken');
      else this.bomSeen = 3;
    }
    while (i < len) {
      if (this.token !== NONE) {
        i = this.continueToken(buf, i);
        continue;
      }
      const b = buf[i]!;
      if (b === 0x20 || b === 0x09 || b === 0x0d) {
        i++;
        continue;
      }
      if (b === 0x0a) {
        this.line++;
        this.lineStart = this.offset + i + 1;
        i++;
        continue;
      }
      i = this.structural(buf, i, b);
    }
    if (this.token !== NONE) this.keepOpenToken(buf);
    this.offset += len;
  }

  /** Call at end of input: throws ParseError when the document is incomplete. */
  end(): void {
    if (this.token === LITERAL) this.finishToken(Buffer.alloc(0), 0);
    if (this.token !== NONE || this.state !== DONE) {
      throw unparseable(
        `The JSON document ends before it is complete (truncated file?) at line ${this.line}.`,
        this.line,
        this.offset - this.lineStart + 1,
      );
    }
  }

  private structural(buf: Buffer, i: number, b: number): number {
    switch (this.state) {
      case VALUE_OR_END:
        if (b === 0x5d) return this.close(buf, i, 1);
        return this.startValue(buf, i, b);
      case VALUE:
        return this.startValue(buf, i, b);
      case KEY_OR_END:
      case KEY:
        if (b === 0x7d && this.state === KEY_OR_END) return this.close(buf, i, 0);
        if (b !== 0x22) throw this.invalid(buf, i, 'expected a property name in double quotes');
        return this.startToken(buf, i, STRING, AS_KEY);
      case COLON:
        if (b !== 0x3a) throw this.invalid(buf, i, "expected ':' after a property name");
        this.state = VALUE;
        return i + 1;
      case COMMA_OR_END:
        if (b === 0x2c) {
          this.state = this.kinds[this.kinds.length - 1] === 0 ? KEY : VALUE;
          return i + 1;
        }
        if (b === 0x7d || b === 0x5d) return this.close(buf, i, b === 0x7d ? 0 : 1);
        throw this.invalid(buf, i, "expected ',' or the end of the object or array");
      default:
        throw this.invalid(buf, i, 'unexpected data after the end of the document');
    }
  }

  private startValue(buf: Buffer, i: number, b: number): number {
    const top = this.keys.length - 1;
    if (top >= 0 && this.kinds[top] === 1)
      this.keys[top] = this.keys[top] === null ? 0 : (this.keys[top] as number) + 1;
    const path = this.keys.filter((k): k is string | number => k !== null);
    const selected = this.handlers.select(path);
    if (b === 0x7b || b === 0x5b) {
      if (selected) {
        this.tokenPath = path;
        if (selected !== true && b === 0x7b) {
          const end = this.pick(buf, i, selected, path);
          if (end >= 0) return end;
        }
        return this.startToken(buf, i, RECORD, SELECTED);
      }
      this.kinds.push(b === 0x7b ? 0 : 1);
      this.keys.push(null);
      if (this.kinds.length > this.limits.maxDepth) throw this.tooDeep(i);
      this.state = b === 0x7b ? KEY_OR_END : VALUE_OR_END;
      return i + 1;
    }
    this.tokenPath = path;
    if (b === 0x22) return this.startToken(buf, i, STRING, selected ? SELECTED : SKIP);
    if (b === 0x2d || (b >= 0x30 && b <= 0x39) || b === 0x74 || b === 0x66 || b === 0x6e)
      return this.startToken(buf, i, LITERAL, selected ? SELECTED : SKIP);
    throw this.invalid(buf, i, 'expected a value');
  }

  /**
   * An object record that starts and ends in this chunk, read by `picker`: no text cut out, no
   * whole object built. Returns where scanning goes on, or -1 to take the general way.
   */
  private pick(buf: Buffer, i: number, picker: RecordPicker, path: JsonPath): number {
    const limit = Math.min(buf.length, i + this.limits.maxRecordBytes);
    const maxDepth = this.limits.maxDepth - this.kinds.length;
    const end = picker.pick(buf, i, limit, maxDepth, this.limits.maxTokenBytes);
    if (end < 0) return -1;
    if (picker.newlines > 0) {
      this.line += picker.newlines;
      this.lineStart = this.offset + picker.lastNewline + 1;
    }
    this.state = this.kinds.length === 0 ? DONE : COMMA_OR_END;
    this.handlers.onValue(path, picker.value);
    return end;
  }

  private startToken(buf: Buffer, i: number, token: number, role: number): number {
    this.token = token;
    this.role = role;
    this.tokenLine = this.line;
    this.tokenColumn = this.column(i);
    this.segStart = i;
    this.pieces = [];
    this.pieceBytes = 0;
    this.str.escape = false;
    this.depth = 0;
    this.inString = false;
    return this.continueToken(buf, token === STRING ? i + 1 : i);
  }

  /** Advances the token in progress from `i`; returns where scanning goes on. */
  private continueToken(buf: Buffer, i: number): number {
    const len = buf.length;
    if (this.token === STRING) {
      const q = scanStringEnd(buf, i, this.str);
      if (q < 0) return len;
      if (this.pieceBytes + q - this.segStart > this.limits.maxTokenBytes) throw this.tooLong('string');
      return this.finishToken(buf, q + 1);
    }
    if (this.token === LITERAL) {
      let j = i;
      while (j < len && isLiteralByte(buf[j]!)) j++;
      if (j === len) return len;
      return this.finishToken(buf, j);
    }
    return this.scanRecord(buf, i);
  }

  /** Inside a selected object or array: strings, brackets and newlines only. */
  private scanRecord(buf: Buffer, i: number): number {
    const len = buf.length;
    const outer = this.kinds.length;
    const maxDepth = this.limits.maxDepth;
    const maxString = this.limits.maxTokenBytes;
    let depth = this.depth;
    if (this.inString) {
      const q = scanStringEnd(buf, i, this.str);
      if (q < 0) {
        this.stringBytes += len - i;
        if (this.stringBytes > maxString) throw this.tooLong('string');
        return len;
      }
      if (this.stringBytes + q - i > maxString) throw this.tooLong('string');
      this.inString = false;
      i = q + 1;
    }
    for (; i < len; i++) {
      const b = buf[i]!;
      if (b === 0x22) {
        const q = scanStringEnd(buf, i + 1, this.str);
        if (q < 0) {
          this.inString = true;
          this.stringBytes = len - i - 1;
          if (this.stringBytes > maxString) throw this.tooLong('string');
          this.depth = depth;
          return len;
        }
        if (q - i - 1 > maxString) throw this.tooLong('string');
        i = q;
      } else if (b === 0x7b || b === 0x5b) {
        if (++depth + outer > maxDepth) throw this.tooDeep(i);
      } else if (b === 0x7d || b === 0x5d) {
        if (--depth === 0) {
          this.depth = 0;
          return this.finishToken(buf, i + 1);
        }
      } else if (b === 0x0a) {
        this.line++;
        this.lineStart = this.offset + i + 1;
      }
    }
    this.depth = depth;
    return len;
  }

  /** At the end of a chunk with a token open: bound it and keep its bytes for the next chunk. */
  private keepOpenToken(buf: Buffer): void {
    const bytes = this.pieceBytes + buf.length - this.segStart;
    if (this.token === RECORD) {
      if (bytes > this.limits.maxRecordBytes) throw this.tooLarge();
    } else if (bytes > this.limits.maxTokenBytes)
      throw this.tooLong(this.token === STRING ? 'string' : 'value');
    if (buf.length > this.segStart) this.pieces.push(buf.subarray(this.segStart));
    this.pieceBytes = bytes;
    this.segStart = 0;
  }

  private finishToken(buf: Buffer, end: number): number {
    const token = this.token;
    this.token = NONE;
    if (token === RECORD && this.pieceBytes + end - this.segStart > this.limits.maxRecordBytes)
      throw this.tooLarge();
    let text: string;
    if (this.pieces.length === 0) text = buf.toString('utf8', this.segStart, end);
    else {
      this.pieces.push(buf.subarray(this.segStart, end));
      text = Buffer.concat(this.pieces).toString('utf8');
      this.pieces = [];
    }
    this.pieceBytes = 0;
    if (this.role !== SKIP || token !== STRING) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        throw jsonParseError(err, text, this.tokenLine, this.tokenColumn);
      }
      if (this.role === AS_KEY) {
        this.keys[this.keys.length - 1] = value as string;
        this.state = COLON;
        return end;
      }
      if (this.role === SELECTED) this.handlers.onValue(this.tokenPath, value);
    } else if (text.includes('\\') || hasControl(text)) {
      // A skipped string is still checked: escapes and control characters.
      try {
        JSON.parse(text);
      } catch (err) {
        throw jsonParseError(err, text, this.tokenLine, this.tokenColumn);
      }
    }
    this.state = this.kinds.length === 0 ? DONE : COMMA_OR_END;
    return end;
  }

  private close(buf: Buffer, i: number, kind: number): number {
    if (this.kinds[this.kinds.length - 1] !== kind) throw this.invalid(buf, i, 'mismatched closing bracket');
    this.kinds.pop();
    this.keys.pop();
    this.handlers.onContainerEnd?.(this.keys.filter((k): k is string | number => k !== null));
    this.state = this.kinds.length === 0 ? DONE : COMMA_OR_END;
    return i + 1;
  }

  private column(i: number): number {
    return this.offset + i - this.lineStart + 1;
  }

  private invalid(buf: Buffer, i: number, what: string) {
    const shown =
      buf[i]! >= 0x21 && buf[i]! < 0x7f
        ? `'${String.fromCharCode(buf[i]!)}'`
        : `byte 0x${buf[i]!.toString(16)}`;
    const col = this.column(i);
    return unparseable(
      `Invalid JSON near line ${this.line}, column ${col}: unexpected ${shown}, ${what}.`,
      this.line,
      col,
    );
  }

  private tooDeep(i: number) {
    return unparseable(
      `JSON nesting is deeper than the limit of ${this.limits.maxDepth} levels.`,
      this.line,
      this.column(i),
    );
  }

  private tooLong(what: 'string' | 'value') {
    return unparseable(
      `A JSON ${what} near line ${this.tokenLine} exceeds the ${formatSize(this.limits.maxTokenBytes)} size limit.`,
      this.tokenLine,
      this.tokenColumn,
    );
  }

  private tooLarge() {
    return unparseable(
      `A JSON record at ${this.tokenPath.join('.')} (line ${this.tokenLine}, column ${this.tokenColumn}) is larger than the ${formatSize(this.limits.maxRecordBytes)} limit.`,
      this.tokenLine,
      this.tokenColumn,
    );
  }
}

/** Bytes a number, `true`, `false` or `null` can be made of (JSON.parse checks the rest). */
function isLiteralByte(b: number): boolean {
  return (
    (b >= 0x30 && b <= 0x39) ||
    (b >= 0x61 && b <= 0x7a) ||
    b === 0x2d ||
    b === 0x2b ||
    b === 0x2e ||
    b === 0x45
  );
}

function hasControl(text: string): boolean {
  for (let k = 0; k < text.length; k++) if (text.charCodeAt(k) < 0x20) return true;
  return false;
}
