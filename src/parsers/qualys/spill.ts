/**
 * The on-disk row format of the Qualys asset-report join (see `qualys-asset.ts`). Each field is
 * written as `<length>:<text>` (length in UTF-16 code units) or `~` for null, and rows simply
 * follow each other. Compared with one JSON line per row this needs no escaping on the way out
 * and no scanning for line breaks or unescaping on the way back, which made the spill the most
 * expensive part of the asset report (bench/parsers/README.md). Any text round-trips, whatever
 * characters it contains; a lone surrogate becomes U+FFFD, which is also one code unit.
 */

/** One host-vulnerability row, spilled to disk until the glossary is known. */
export interface SpillRow {
  qid: string | null;
  type: string;
  port: string | null;
  protocol: string | null;
  result: string | null;
  ip: string | null;
  dns: string | null;
  netbios: string | null;
  os: string | null;
  excerpt: string;
}

const FIELDS = [
  'qid',
  'type',
  'port',
  'protocol',
  'result',
  'ip',
  'dns',
  'netbios',
  'os',
  'excerpt',
] as const;

const NULL = '~';
const COLON = 0x3a;

/** Serialises one row. */
export function encodeSpillRow(row: SpillRow): string {
  let out = '';
  for (const key of FIELDS) {
    const value = row[key];
    out += value === null ? NULL : `${value.length}:${value}`;
  }
  return out;
}

/** Turns the decoded text of a spill file, in chunks of any size, back into rows. */
export class SpillRowDecoder {
  private carry = '';

  /** Returns the rows completed by `chunk`; a row cut by the chunk end is kept for the next call. */
  push(chunk: string): SpillRow[] {
    const text = this.carry === '' ? chunk : this.carry + chunk;
    const rows: SpillRow[] = [];
    let pos = 0;
    for (;;) {
      const row = decodeRow(text, pos);
      if (row === null) break;
      rows.push(row.row);
      pos = row.next;
    }
    this.carry = pos === 0 ? text : text.slice(pos);
    return rows;
  }

  /** Throws when the file ended inside a row (a truncated spill file is a bug, not a user error). */
  end(): void {
    if (this.carry !== '') throw new Error('The Qualys join spill file ends inside a row');
  }
}

function decodeRow(text: string, start: number): { row: SpillRow; next: number } | null {
  const values: (string | null)[] = [];
  let pos = start;
  for (let f = 0; f < FIELDS.length; f++) {
    if (pos >= text.length) return null;
    if (text.charCodeAt(pos) === 0x7e) {
      values.push(null);
      pos++;
      continue;
    }
    let len = 0;
    let i = pos;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === COLON) break;
      len = len * 10 + (c - 0x30);
    }
    if (i >= text.length || i + 1 + len > text.length) return null;
    values.push(text.slice(i + 1, i + 1 + len));
    pos = i + 1 + len;
  }
  const [qid, type, port, protocol, result, ip, dns, netbios, os, excerpt] = values;
  return {
    row: {
      qid: qid!,
      type: type ?? '',
      port: port!,
      protocol: protocol!,
      result: result!,
      ip: ip!,
      dns: dns!,
      netbios: netbios!,
      os: os!,
      excerpt: excerpt ?? '',
    },
    next: pos,
  };
}
