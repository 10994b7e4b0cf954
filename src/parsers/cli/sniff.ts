import type { ScanHead, Sniffed } from '../format-module.js';

/**
 * CLI findings: a JSON document with `findings`, or JSON Lines whose first complete line is an
 * object shaped like a finding, or a `{"tool": …}` line followed by one (docs/ingestion.md#formats).
 */
export function sniffCli(head: ScanHead): Sniffed {
  if (head.json?.keys.has('findings')) return 'likely';
  const text = head.text;
  if (!text.startsWith('{') && !text.startsWith('[')) return null;
  return looksLikeJsonLines(text) ? 'likely' : null;
}

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
