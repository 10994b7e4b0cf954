/** What {@link RecordPicker} keeps of an object record. */
export interface PickSpec {
  /** Properties whose value is kept when it is a string or a number (anything else becomes null). */
  fields: readonly string[];
  /**
   * A property holding an array of records of the same kind, picked the same way: an object
   * element becomes its picked object, any other element `{}`, and a value that is not an array `[]`.
   */
  nested: string;
}

/** A picked record: only the spec's properties, as `JSON.parse` gave them (see {@link PickSpec}). */
export type PickedRecord = Record<string, unknown>;

const FAIL = -1;
const EMPTY = Buffer.alloc(0);
/** Recursion of the picker; records nested deeper go the general way (which is iterative). */
const MAX_PICK_DEPTH = 512;

interface Key {
  name: string;
  bytes: Buffer;
  nested: boolean;
}

/**
 * Reads the few properties a format needs out of an object record's bytes, without building the
 * rest (a CycloneDX component's licenses, hashes, properties, evidence), as a validating
 * recursive-descent pass over one contiguous buffer. Written by hand because it measured better
 * than cutting each component out for `JSON.parse`: a CycloneDX JSON parse takes 0.83–0.87× the
 * CPU (bench/parsers/README.md, "CycloneDX JSON components picked").
 *
 * The contract is one-sided: {@link pick} either returns the record's end with `value` equal to
 * what `JSON.parse` of the record would give for the spec's properties, or it fails, and the
 * caller then takes the general way (cut the record out and `JSON.parse` it), which produces the
 * errors. So it fails on anything it is not sure of, not only on invalid JSON: a record that runs
 * past the buffer (a chunk boundary) or past the limits, a key written with escapes that matter.
 * Duplicate keys: the last one wins, as in `JSON.parse`.
 */
export class RecordPicker {
  /** The picked record after a successful {@link pick}. */
  value: PickedRecord = {};
  /** Newlines the record spanned (all in whitespace: a raw newline in a string is invalid). */
  newlines = 0;
  /** Index in the buffer of the record's last newline, when `newlines > 0`. */
  lastNewline = -1;

  private readonly keys: Key[];
  private b: Buffer = EMPTY;
  private limit = 0;
  private maxDepth = 0;
  private maxString = 0;
  private escaped = false;

  constructor(spec: PickSpec) {
    this.keys = [...spec.fields, spec.nested].map((name) => ({
      name,
      bytes: Buffer.from(name, 'utf8'),
      nested: name === spec.nested,
    }));
  }

  /**
   * Picks the object record starting with `{` at `start`. Returns the index after its closing
   * brace, or -1 when the general way must read it: invalid, longer than `limit` allows, nested
   * deeper than `maxDepth` (the record itself is depth 1), or a string of more than `maxString`
   * bytes as written.
   */
  pick(buf: Buffer, start: number, limit: number, maxDepth: number, maxString: number): number {
    this.b = buf;
    this.limit = limit;
    this.maxDepth = Math.min(maxDepth, MAX_PICK_DEPTH);
    this.maxString = maxString;
    this.newlines = 0;
    this.lastNewline = -1;
    const out: PickedRecord = {};
    const end = this.pickObject(start, 1, out);
    this.b = EMPTY; // the chunk is not kept alive by the picker
    if (end === FAIL) return FAIL;
    this.value = out;
    return end;
  }

  /** `p` at `{`; fills `out` with the spec's properties. */
  private pickObject(p: number, depth: number, out: PickedRecord): number {
    if (depth > this.maxDepth) return FAIL;
    const b = this.b;
    p = this.ws(p + 1);
    if (p >= this.limit) return FAIL;
    if (b[p] === 0x7d) return p + 1;
    for (;;) {
      if (b[p] !== 0x22) return FAIL;
      const keyStart = p + 1;
      const keyEnd = this.string(keyStart);
      if (keyEnd === FAIL) return FAIL;
      const key = this.escaped ? this.escapedKey(keyStart, keyEnd) : this.plainKey(keyStart, keyEnd);
      if (key === undefined) return FAIL;
      p = this.ws(keyEnd + 1);
      if (p >= this.limit || b[p] !== 0x3a) return FAIL;
      p = this.ws(p + 1);
      if (p >= this.limit) return FAIL;
      if (key === null) p = this.skipValue(p, depth);
      else if (key.nested) p = this.pickNested(p, depth, out, key.name);
      else p = this.pickField(p, depth, out, key.name);
      if (p === FAIL) return FAIL;
      p = this.ws(p);
      if (p >= this.limit) return FAIL;
      const c = b[p];
      if (c === 0x7d) return p + 1;
      if (c !== 0x2c) return FAIL;
      p = this.ws(p + 1);
      if (p >= this.limit) return FAIL;
    }
  }

  private pickField(p: number, depth: number, out: PickedRecord, name: string): number {
    const b = this.b;
    const c = b[p]!;
    if (c === 0x22) {
      const end = this.string(p + 1);
      if (end === FAIL) return FAIL;
      out[name] = this.escaped
        ? (JSON.parse(b.toString('utf8', p, end + 1)) as string)
        : b.toString('utf8', p + 1, end);
      return end + 1;
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const end = this.number(p);
      if (end === FAIL) return FAIL;
      out[name] = JSON.parse(b.toString('latin1', p, end)) as number;
      return end;
    }
    const end = this.skipValue(p, depth);
    if (end !== FAIL) out[name] = null;
    return end;
  }

  private pickNested(p: number, depth: number, out: PickedRecord, name: string): number {
    const b = this.b;
    if (b[p] !== 0x5b) {
      const end = this.skipValue(p, depth);
      if (end !== FAIL) out[name] = [];
      return end;
    }
    if (depth + 1 > this.maxDepth) return FAIL;
    const list: PickedRecord[] = [];
    p = this.ws(p + 1);
    if (p >= this.limit) return FAIL;
    if (b[p] !== 0x5d) {
      for (;;) {
        const child: PickedRecord = {};
        p = b[p] === 0x7b ? this.pickObject(p, depth + 2, child) : this.skipValue(p, depth + 1);
        if (p === FAIL) return FAIL;
        list.push(child);
        p = this.ws(p);
        if (p >= this.limit) return FAIL;
        if (b[p] === 0x5d) break;
        if (b[p] !== 0x2c) return FAIL;
        p = this.ws(p + 1);
        if (p >= this.limit) return FAIL;
      }
    }
    out[name] = list;
    return p + 1;
  }

  /** Validates the value at `p` (inside a container of depth `depth`) without keeping it. */
  private skipValue(p: number, depth: number): number {
    const b = this.b;
    const c = b[p]!;
    if (c === 0x22) {
      const end = this.string(p + 1);
      return end === FAIL ? FAIL : end + 1;
    }
    if (c === 0x7b || c === 0x5b) {
      if (depth + 1 > this.maxDepth) return FAIL;
      const close = c + 2; // } is { + 2, ] is [ + 2
      p = this.ws(p + 1);
      if (p >= this.limit) return FAIL;
      if (b[p] === close) return p + 1;
      for (;;) {
        if (c === 0x7b) {
          if (b[p] !== 0x22) return FAIL;
          p = this.string(p + 1);
          if (p === FAIL) return FAIL;
          p = this.ws(p + 1);
          if (p >= this.limit || b[p] !== 0x3a) return FAIL;
          p = this.ws(p + 1);
          if (p >= this.limit) return FAIL;
        }
        p = this.skipValue(p, depth + 1);
        if (p === FAIL) return FAIL;
        p = this.ws(p);
        if (p >= this.limit) return FAIL;
        if (b[p] === close) return p + 1;
        if (b[p] !== 0x2c) return FAIL;
        p = this.ws(p + 1);
        if (p >= this.limit) return FAIL;
      }
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number(p);
    if (c === 0x74) return this.word(p, TRUE);
    if (c === 0x66) return this.word(p, FALSE);
    if (c === 0x6e) return this.word(p, NULL);
    return FAIL;
  }

  /**
   * `p` just after an opening quote: the index of the closing quote. Sets `escaped` when the
   * string has escapes (all checked); a raw control character fails, as in `JSON.parse`.
   */
  private string(p: number): number {
    const b = this.b;
    const limit = this.limit;
    const start = p;
    let escaped = false;
    for (; p < limit; p++) {
      const c = b[p]!;
      if (c === 0x22) {
        if (p - start > this.maxString) return FAIL;
        this.escaped = escaped;
        return p;
      }
      if (c === 0x5c) {
        escaped = true;
        if (++p >= limit) return FAIL;
        const e = b[p]!;
        if (e === 0x75) {
          if (p + 4 >= limit) return FAIL;
          for (let k = 1; k <= 4; k++) if (!isHex(b[p + k]!)) return FAIL;
          p += 4;
        } else if (!ESCAPABLE[e]) return FAIL;
      } else if (c < 0x20) return FAIL;
    }
    return FAIL;
  }

  /** JSON's number grammar from `p`; the index after it. */
  private number(p: number): number {
    const b = this.b;
    const limit = this.limit;
    if (b[p] === 0x2d) p++;
    if (p >= limit) return FAIL;
    if (b[p] === 0x30) p++;
    else if (b[p]! >= 0x31 && b[p]! <= 0x39) p = digits(b, p, limit);
    else return FAIL;
    if (p < limit && b[p] === 0x2e) {
      const q = digits(b, p + 1, limit);
      if (q === p + 1) return FAIL;
      p = q;
    }
    if (p < limit && (b[p] === 0x65 || b[p] === 0x45)) {
      p++;
      if (p < limit && (b[p] === 0x2b || b[p] === 0x2d)) p++;
      const q = digits(b, p, limit);
      if (q === p) return FAIL;
      p = q;
    }
    // A number cut by the buffer's end might go on in the next chunk.
    return p >= limit ? FAIL : p;
  }

  private word(p: number, word: readonly number[]): number {
    if (p + word.length > this.limit) return FAIL;
    for (let k = 1; k < word.length; k++) if (this.b[p + k] !== word[k]) return FAIL;
    return p + word.length;
  }

  /** Skips JSON whitespace, counting newlines. */
  private ws(p: number): number {
    const b = this.b;
    const limit = this.limit;
    for (; p < limit; p++) {
      const c = b[p];
      if (c === 0x20 || c === 0x09 || c === 0x0d) continue;
      if (c !== 0x0a) break;
      this.newlines++;
      this.lastNewline = p;
    }
    return p;
  }

  /** The wanted key written as `[s, e)` without escapes, else null. */
  private plainKey(s: number, e: number): Key | null {
    const b = this.b;
    const len = e - s;
    for (const key of this.keys) {
      const kb = key.bytes;
      if (kb.length !== len) continue;
      let k = 0;
      while (k < len && b[s + k] === kb[k]) k++;
      if (k === len) return key;
    }
    return null;
  }

  /** A key written with escapes, decoded as `JSON.parse` would. */
  private escapedKey(s: number, e: number): Key | null {
    const name = JSON.parse(this.b.toString('utf8', s - 1, e + 1)) as string;
    return this.keys.find((k) => k.name === name) ?? null;
  }
}

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

/** Bytes that may follow a backslash (`u` is handled apart). */
const ESCAPABLE: boolean[] = [];
for (const c of '"\\/bfnrt') ESCAPABLE[c.charCodeAt(0)] = true;

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

function digits(b: Buffer, p: number, limit: number): number {
  while (p < limit && b[p]! >= 0x30 && b[p]! <= 0x39) p++;
  return p;
}
