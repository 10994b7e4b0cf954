import { JsonTokenizer } from './json/json-tokenizer.js';
import { SCAN_FORMATS, type ScanFormat } from './types.js';

/** How many leading bytes {@link detectFormat} wants to see. */
export const DETECT_HEAD_BYTES = 64 * 1024;

/** Formats a caller may force instead of detection (the `format` query, docs/ingestion.md#upload). */
export const FORMAT_OVERRIDES: readonly ScanFormat[] = SCAN_FORMATS;

/** Type guard for a user-supplied `format` override. */
export function isScanFormat(value: unknown): value is ScanFormat {
  return typeof value === 'string' && (SCAN_FORMATS as readonly string[]).includes(value);
}

const XML_ROOTS: Readonly<Record<string, ScanFormat>> = {
  NessusClientData_v2: 'nessus',
  SCAN: 'qualys',
  ASSET_DATA_REPORT: 'qualys',
  HOST_LIST_VM_DETECTION_OUTPUT: 'qualys',
  report: 'openvas',
  get_reports_response: 'openvas',
};

/**
 * Returns the root element's local name and its start tag, skipping the XML declaration,
 * comments, processing instructions and a DOCTYPE (including an internal subset). Null when the
 * head does not start like XML.
 */
export function findXmlRoot(text: string): { name: string; tag: string } | null {
  let i = 0;
  for (;;) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (text.startsWith('<?', i)) {
      const end = text.indexOf('?>', i);
      if (end < 0) return null;
      i = end + 2;
    } else if (text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i);
      if (end < 0) return null;
      i = end + 3;
    } else if (text.startsWith('<!DOCTYPE', i) || text.startsWith('<!doctype', i)) {
      const bracket = text.indexOf('[', i);
      const close = text.indexOf('>', i);
      if (close < 0) return null;
      if (bracket >= 0 && bracket < close) {
        const end = text.indexOf(']', bracket);
        if (end < 0) return null;
        const gt = text.indexOf('>', end);
        if (gt < 0) return null;
        i = gt + 1;
      } else {
        i = close + 1;
      }
    } else if (text[i] === '<') {
      const m = /^<([A-Za-z_][\w.:-]*)([^>]*)>?/.exec(text.slice(i, i + 4096));
      if (!m) return null;
      const qname = m[1]!;
      return { name: qname.includes(':') ? qname.slice(qname.indexOf(':') + 1) : qname, tag: m[0] };
    } else {
      return null;
    }
  }
}

interface JsonHead {
  keys: Set<string>;
  scalars: Map<string, string>;
  runItemKeys: Set<string>;
}

/** Tokenises as much of a JSON head as is available and records top-level keys. Throws on invalid JSON. */
function scanJsonHead(text: string): JsonHead {
  const head: JsonHead = { keys: new Set(), scalars: new Map(), runItemKeys: new Set() };
  const tokens = new JsonTokenizer(Number.MAX_SAFE_INTEGER).write(text);
  let depth = 0;
  let key: string | null = null;
  const path: (string | null)[] = [];
  for (const t of tokens as { name: string; value?: unknown }[]) {
    if (t.name === 'startObject' || t.name === 'startArray') {
      path[depth] = key;
      depth++;
      key = null;
      continue;
    }
    if (t.name === 'endObject' || t.name === 'endArray') {
      depth--;
      key = null;
      continue;
    }
    if (t.name === 'keyValue') {
      key = String(t.value);
      if (depth === 1) head.keys.add(key);
      // depth 3 object keys inside the `runs` array: runs[i].tool / runs[i].results
      if (depth === 3 && path[1] === 'runs') head.runItemKeys.add(key);
      continue;
    }
    if (depth === 1 && key !== null) head.scalars.set(key, String(t.value));
  }
  return head;
}

function detectJson(text: string): ScanFormat | null {
  try {
    const head = scanJsonHead(text);
    const schema = head.scalars.get('$schema') ?? '';
    if (head.scalars.get('bomFormat') === 'CycloneDX' || /cyclonedx/i.test(schema)) return 'cyclonedx';
    if (/sarif/i.test(schema)) return 'sarif';
    if (
      head.keys.has('runs') &&
      (head.keys.has('version') || head.runItemKeys.has('tool') || head.runItemKeys.has('results'))
    ) {
      return 'sarif';
    }
    if (head.keys.has('findings') && head.keys.has('tool')) return 'cli';
    if (head.keys.has('findings')) return 'cli';
  } catch {
    // Not a single JSON document: maybe JSON Lines, checked below.
  }
  return looksLikeJsonLines(text) ? 'cli' : null;
}

/**
 * JSON Lines where the first complete line is an object shaped like a CLI finding, or a
 * `{"tool": …}` line followed by one (both CLI shapes of docs/ingestion.md#formats, see `cli.ts`).
 */
function looksLikeJsonLines(text: string): boolean {
  const lines = text.split('\n', 3).map((l) => l.trim());
  const first = parseObject(lines[0] ?? '');
  if (first && isToolLine(first)) {
    const second = lines.length > 2 ? parseObject(lines[1] ?? '') : null;
    return second !== null && looksLikeFinding(second);
  }
  return first !== null && looksLikeFinding(first);
}

function parseObject(line: string): Record<string, unknown> | null {
  if (!line.startsWith('{')) return null;
  try {
    const v = JSON.parse(line) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const looksLikeFinding = (o: Record<string, unknown>): boolean =>
  typeof o.title === 'string' && ('severity' in o || 'cveIds' in o);

/** A JSON Lines file's optional first line naming the tool: `{"tool": {"name": …}}` and nothing else. */
export function isToolLine(o: Record<string, unknown>): boolean {
  const keys = Object.keys(o);
  return keys.length === 1 && keys[0] === 'tool';
}

/**
 * Detects a scan format from the first bytes of the file (pass up to {@link DETECT_HEAD_BYTES}).
 * Returns null when the content is not recognised; callers turn that into `unsupported_format`.
 */
export function detectFormat(head: Buffer): ScanFormat | null {
  let text = head.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const trimmed = text.trimStart();
  if (trimmed.startsWith('<')) {
    const root = findXmlRoot(trimmed);
    if (!root) return null;
    if (root.name === 'bom') return /cyclonedx\.org/i.test(root.tag) ? 'cyclonedx' : null;
    return XML_ROOTS[root.name] ?? null;
  }
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) return detectJson(trimmed);
  return null;
}
