import { open, type FileHandle } from 'node:fs/promises';
import { SaxesParser } from 'saxes';
import { detectFormat, DETECT_HEAD_BYTES } from '../../src/parsers/detect.js';

/**
 * Splitting one large XML scan, or a JSON Lines file, at record boundaries so several threads can
 * parse it. (JSON Lines needs no head or tail: every line is a record and a document of its own.)
 *
 * Glossary:
 * - head: the bytes before the first record (declaration, DOCTYPE, root and container open tags,
 *   Nessus Policy). Every segment but the first is parsed behind a copy of it.
 * - tail: the bytes after the last record (container and root close tags, the Qualys GLOSSARY,
 *   OpenVAS host details). Every segment but the last is parsed with a copy of it appended.
 * - segment: head + one run of whole records + tail, a well-formed document on its own.
 *
 * Boundaries are found by searching bytes, not by tokenizing, so a marker inside a comment or
 * CDATA could be taken for a record boundary. Such a cut can never yield a well-formed segment
 * (the segment ending there ends inside the comment or with unbalanced tags), so a segment that
 * fails is the signal to discard the plan and parse the whole file on one thread, which also
 * reports any real error with its true line and column. The head is checked up front with the
 * tokenizer itself.
 */

/** Record markers per root element; records are children of `container`. */
interface RecordKind {
  open: string;
  close: string;
  container: string;
}

const KINDS: Readonly<Record<string, RecordKind>> = {
  NessusClientData_v2: { open: '<ReportHost', close: '</ReportHost>', container: 'Report' },
  report: { open: '<result', close: '</result>', container: 'results' },
  get_reports_response: { open: '<result', close: '</result>', container: 'results' },
  ASSET_DATA_REPORT: { open: '<HOST', close: '</HOST>', container: 'HOST_LIST' },
  HOST_LIST_VM_DETECTION_OUTPUT: { open: '<HOST', close: '</HOST>', container: 'HOST_LIST' },
};

/** A byte range `[start, end)` of the file. */
export type ByteRange = readonly [start: number, end: number];

/** What one thread parses: the ranges are read in order and concatenated. */
export interface SplitSegment {
  ranges: ByteRange[];
  /** First and last+1 byte of the file this segment's records come from (for progress). */
  start: number;
  end: number;
}

/** A file cut into segments; parse them in order and concatenate their findings. */
export interface SplitPlan {
  format: 'nessus' | 'openvas' | 'qualys' | 'cli';
  size: number;
  segments: SplitSegment[];
}

/** Options of {@link planSplit}. */
export interface SplitOptions {
  /** Target segment size; smaller bounds the findings buffered ahead of delivery. @defaultValue 16 MiB */
  segmentBytes?: number;
  /** Files smaller than this are not split. @defaultValue 32 MiB */
  minFileBytes?: number;
}

/** A head or tail larger than this would be re-parsed too often to pay; the file is not split. */
const MAX_EDGE_BYTES = 4 * 1024 * 1024;
const WINDOW = 1024 * 1024;

async function read(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  return buf.subarray(0, bytesRead);
}

/** Offset of the first `open` marker followed by whitespace, `>` or `/` (so `<result_count` is skipped). */
function findOpen(buf: Buffer, open: string, from = 0): number {
  for (let i = buf.indexOf(open, from, 'latin1'); i >= 0; i = buf.indexOf(open, i + 1, 'latin1')) {
    const c = buf[i + open.length];
    if (c === 0x20 || c === 0x3e || c === 0x2f || c === 0x0a || c === 0x0d || c === 0x09) return i;
  }
  return -1;
}

/** The record markers for the file's root element (a first guess; `openElementsAt` confirms it). */
function recordKind(head: Buffer): RecordKind | null {
  const m = /<([A-Za-z_][\w.-]*)[\s>/]/.exec(
    head
      .toString('utf8', 0, Math.min(head.length, DETECT_HEAD_BYTES))
      .replace(/<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE[^[>]*(\[[\s\S]*?\])?\s*>/g, ''),
  );
  return (m && KINDS[m[1]!]) ?? null;
}

/** Element path at the end of `text`, or null when it ends inside markup or is not well-formed. */
function openElementsAt(text: string): string[] | null {
  const parser = new SaxesParser();
  const stack: string[] = [];
  let probed: string[] | null = null;
  parser.on('opentag', (tag) => {
    if (tag.name === 'split-probe' && probed === null) probed = [...stack];
    stack.push(tag.name);
  });
  parser.on('closetag', () => void stack.pop());
  parser.on('error', (err) => {
    throw err;
  });
  try {
    parser.write(text);
    // Seen as an element only when the text ends between elements (not in a comment, CDATA,
    // tag or DOCTYPE); the reported path is where it sits.
    parser.write('<split-probe/>');
  } catch {
    return null;
  }
  return probed;
}

/** Offset just after the first newline at or after `target`, or -1 (reads a window at a time). */
async function nextLineStart(fh: FileHandle, target: number, size: number): Promise<number> {
  for (let at = target; at < size; at += WINDOW) {
    const i = (await read(fh, at, WINDOW)).indexOf(0x0a);
    if (i >= 0) return at + i + 1;
  }
  return -1;
}

/** CLI findings as JSON Lines: the first line is a whole object and the next line starts another. */
function isJsonLines(head: Buffer): boolean {
  const text = head.toString('utf8');
  const nl = text.indexOf('\n');
  if (
    nl < 0 ||
    !text
      .slice(nl + 1)
      .trimStart()
      .startsWith('{')
  )
    return false;
  try {
    const first = JSON.parse(text.slice(0, nl)) as unknown;
    return typeof first === 'object' && first !== null && !Array.isArray(first);
  } catch {
    return false;
  }
}

/** Segments of whole lines; each is parsed on its own (`format: 'cli'` sees JSON Lines in every one). */
async function planLines(fh: FileHandle, size: number, segmentBytes: number): Promise<SplitPlan | null> {
  const count = Math.max(1, Math.round(size / segmentBytes));
  const cuts = [0];
  for (let k = 1; k < count; k++) {
    const cut = await nextLineStart(fh, Math.round((size * k) / count), size);
    if (cut > cuts[cuts.length - 1]! && cut < size) cuts.push(cut);
  }
  cuts.push(size);
  if (cuts.length < 3) return null;
  const segments = cuts.slice(0, -1).map((from, k): SplitSegment => {
    const to = cuts[k + 1]!;
    return { ranges: [[from, to]], start: from, end: to };
  });
  return { format: 'cli', size, segments };
}

/**
 * Plans segments of about `segmentBytes` for a plain (not gzip) Nessus, OpenVAS or Qualys
 * host-list file, or CLI JSON Lines; null when the file is small, of another format or layout,
 * or compressed.
 */
export async function planSplit(path: string, options: SplitOptions = {}): Promise<SplitPlan | null> {
  const segmentBytes = options.segmentBytes ?? 16 * 1024 * 1024;
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    if (size < (options.minFileBytes ?? 32 * 1024 * 1024)) return null;
    const head = await read(fh, 0, Math.min(size, MAX_EDGE_BYTES));
    if (head[0] === 0x1f && head[1] === 0x8b) return null;
    const format = detectFormat(head.subarray(0, DETECT_HEAD_BYTES));
    if (format === 'cli')
      return isJsonLines(head.subarray(0, DETECT_HEAD_BYTES))
        ? await planLines(fh, size, segmentBytes)
        : null;
    if (format !== 'nessus' && format !== 'openvas' && format !== 'qualys') return null;
    const kind = recordKind(head);
    if (!kind) return null;
    const headEnd = findOpen(head, kind.open);
    if (headEnd < 0) return null;
    const path = openElementsAt(head.toString('utf8', 0, headEnd));
    if (path === null || KINDS[path[0] ?? ''] !== kind || path[path.length - 1] !== kind.container)
      return null;
    const tailBuf = await read(fh, Math.max(0, size - MAX_EDGE_BYTES), Math.min(size, MAX_EDGE_BYTES));
    const lastClose = tailBuf.lastIndexOf(kind.close, undefined, 'latin1');
    if (lastClose < 0) return null;
    const tailStart = size - tailBuf.length + lastClose + kind.close.length;
    if (tailStart <= headEnd) return null;
    const count = Math.max(1, Math.round((tailStart - headEnd) / segmentBytes));
    const cuts = [headEnd];
    for (let k = 1; k < count; k++) {
      const target = headEnd + Math.round(((tailStart - headEnd) * k) / count);
      if (target <= cuts[cuts.length - 1]!) continue;
      const window = await read(fh, target, WINDOW);
      const i = window.indexOf(kind.close, 0, 'latin1');
      if (i < 0) continue;
      const cut = target + i + kind.close.length;
      if (cut < tailStart) cuts.push(cut);
    }
    cuts.push(tailStart);
    if (cuts.length < 3) return null;
    const last = cuts.length - 2;
    const segments = cuts.slice(0, -1).map((from, k): SplitSegment => {
      const to = cuts[k + 1]!;
      const ranges: ByteRange[] = [];
      if (k === 0) ranges.push([0, to]);
      else ranges.push([0, headEnd], [from, to]);
      if (k === last) ranges[ranges.length - 1] = [ranges[ranges.length - 1]![0], size];
      else ranges.push([tailStart, size]);
      return { ranges, start: k === 0 ? 0 : from, end: k === last ? size : to };
    });
    return { format, size, segments };
  } finally {
    await fh.close();
  }
}
