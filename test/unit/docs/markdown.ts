import { readFileSync } from 'node:fs';

/**
 * What the docs tests need of Markdown: the anchors GitHub gives a file's headings and the
 * relative links a file makes, both outside fenced code blocks and inline code.
 */

/** A heading's anchor as GitHub renders it (github-slugger): lower case, punctuation dropped, each space a hyphen. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/\s/g, '-');
}

/** The lines of a Markdown text that are not inside a fenced code block. */
function proseLines(text: string): string[] {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const m = /^\s*(```+|~~~+)/.exec(line);
    if (m) {
      if (fence === null) fence = m[1]![0]!;
      else if (m[1]![0] === fence) fence = null;
      continue;
    }
    if (fence === null) out.push(line);
  }
  return out;
}

/** Every anchor of a Markdown file's headings, duplicates numbered as GitHub does (`-1`, `-2`). */
export function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseLines(readFileSync(file, 'utf8'))) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

export interface MarkdownLink {
  line: number;
  target: string;
}

/** The links of a Markdown file whose target is relative (a path, or `#anchor` in the same file). */
export function relativeLinksOf(file: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  const text = readFileSync(file, 'utf8');
  let fence: string | null = null;
  text.split('\n').forEach((raw, i) => {
    const m = /^\s*(```+|~~~+)/.exec(raw);
    if (m) {
      if (fence === null) fence = m[1]![0]!;
      else if (m[1]![0] === fence) fence = null;
      return;
    }
    if (fence !== null) return;
    const line = raw.replace(/`[^`]*`/g, '');
    for (const l of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = l[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      links.push({ line: i + 1, target });
    }
  });
  return links;
}
