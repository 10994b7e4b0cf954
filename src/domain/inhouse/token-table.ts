/**
 * Lookup tables of the compiled predictor (src/domain/inhouse/README.md#prediction-time): open
 * addressing over typed arrays, so a token is found from its characters in the text without
 * cutting it out as a string, and a bigram from its two tokens' numbers without a `Map`. With a
 * vocabulary of tens of thousands of terms a `Map` lookup per word was most of a prediction.
 */

/** Strings → numbers; a string is looked up by a range of a text. */
export interface TokenTable {
  mask: number;
  /** Entry number in each slot, -1 when empty. */
  slots: Int32Array;
  values: Int32Array;
  /** Entry `e`'s characters are `chars[start[e]..start[e + 1])`. */
  chars: Uint16Array;
  start: Int32Array;
}

function capacityFor(entries: number): number {
  let size = 16;
  while (size < entries * 2) size *= 2;
  return size;
}

/** FNV-1a over the character codes `text[from..to)`. */
function hashRange(text: string, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let k = from; k < to; k++) h = Math.imul(h ^ text.charCodeAt(k), 0x01000193);
  return h >>> 0;
}

/** A table of `entries` (a key given twice keeps its first value). */
export function tokenTable(entries: readonly (readonly [string, number])[]): TokenTable {
  const size = capacityFor(entries.length);
  const slots = new Int32Array(size).fill(-1);
  const keys: string[] = [];
  const values: number[] = [];
  const table = {
    mask: size - 1,
    slots,
    values: new Int32Array(0),
    chars: new Uint16Array(0),
    start: new Int32Array(1),
  };
  const found = new Set<string>();
  for (const [key, value] of entries) {
    if (found.has(key)) continue;
    found.add(key);
    let slot = hashRange(key, 0, key.length) & table.mask;
    while ((slots[slot] as number) >= 0) slot = (slot + 1) & table.mask;
    slots[slot] = keys.length;
    keys.push(key);
    values.push(value);
  }
  const start = new Int32Array(keys.length + 1);
  keys.forEach((k, e) => (start[e + 1] = (start[e] as number) + k.length));
  const chars = new Uint16Array(start[keys.length] as number);
  keys.forEach((k, e) => {
    for (let i = 0; i < k.length; i++) chars[(start[e] as number) + i] = k.charCodeAt(i);
  });
  return { ...table, values: Int32Array.from(values), chars, start };
}

/** The value of the key `text[from..to)`, or `missing`. */
export function lookupToken(t: TokenTable, text: string, from: number, to: number, missing: number): number {
  const length = to - from;
  let slot = hashRange(text, from, to) & t.mask;
  for (;;) {
    const e = t.slots[slot] as number;
    if (e < 0) return missing;
    const s = t.start[e] as number;
    if ((t.start[e + 1] as number) - s === length) {
      let k = 0;
      while (k < length && t.chars[s + k] === text.charCodeAt(from + k)) k++;
      if (k === length) return t.values[e] as number;
    }
    slot = (slot + 1) & t.mask;
  }
}

/** Pairs of non-negative numbers → numbers. */
export interface PairTable {
  mask: number;
  a: Int32Array;
  b: Int32Array;
  values: Int32Array;
}

function hashPair(a: number, b: number): number {
  return (Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca6b)) >>> 0;
}

/** A table of `[a, b, value]` (a pair given twice keeps its first value). */
export function pairTable(entries: readonly (readonly [number, number, number])[]): PairTable {
  const size = capacityFor(entries.length);
  const t: PairTable = {
    mask: size - 1,
    a: new Int32Array(size).fill(-1),
    b: new Int32Array(size),
    values: new Int32Array(size),
  };
  for (const [a, b, value] of entries) {
    let slot = hashPair(a, b) & t.mask;
    while ((t.a[slot] as number) >= 0 && !(t.a[slot] === a && t.b[slot] === b)) slot = (slot + 1) & t.mask;
    if ((t.a[slot] as number) >= 0) continue;
    t.a[slot] = a;
    t.b[slot] = b;
    t.values[slot] = value;
  }
  return t;
}

/** The value of the pair `(a, b)`, or -1. */
export function lookupPair(t: PairTable, a: number, b: number): number {
  let slot = hashPair(a, b) & t.mask;
  for (;;) {
    const x = t.a[slot] as number;
    if (x < 0) return -1;
    if (x === a && t.b[slot] === b) return t.values[slot] as number;
    slot = (slot + 1) & t.mask;
  }
}
