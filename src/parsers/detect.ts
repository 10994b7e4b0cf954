import { JsonTokenizer } from './json/json-tokenizer.js';
import type { JsonHead, ScanHead } from './format-module.js';
import { FORMAT_MODULES, SCAN_FORMATS, type ScanFormat } from './registry.js';

/** How many leading bytes {@link detectFormat} wants to see. */
export const DETECT_HEAD_BYTES = 64 * 1024;

/** Formats a caller may force instead of detection (the `format` query, docs/ingestion.md#upload). */
export const FORMAT_OVERRIDES: readonly ScanFormat[] = SCAN_FORMATS;

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

/** The head's JSON keys, or null when it is not a single JSON document (maybe JSON Lines). */
function jsonHeadOf(text: string): JsonHead | null {
  try {
    return scanJsonHead(text);
  } catch {
    return null;
  }
}

/**
 * Detects a scan format from the first bytes of the file (pass up to {@link DETECT_HEAD_BYTES}).
 * Returns null when the content is not recognised; callers turn that into `unsupported_format`.
 */
export function detectFormat(head: Buffer): ScanFormat | null {
  let text = head.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const trimmed = text.trimStart();
  let seen: ScanHead;
  if (trimmed.startsWith('<')) {
    const root = findXmlRoot(trimmed);
    if (!root) return null;
    seen = { text: trimmed, xmlRoot: root, json: null };
  } else if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    seen = { text: trimmed, xmlRoot: null, json: jsonHeadOf(trimmed) };
  } else {
    return null;
  }
  let likely: ScanFormat | null = null;
  for (const m of FORMAT_MODULES) {
    const said = m.sniff(seen);
    if (said === 'sure') return m.format;
    if (said === 'likely') likely ??= m.format;
  }
  return likely;
}
