/**
 * How the generator builds a large document out of a small fixture: the fixture's own text is cut
 * into fixed parts (before, between and after the repeated records) and repeated sections, and
 * each repetition rewrites the records so they describe a new host, file or package.
 *
 * Glossary:
 * - step: one unit of repetition. A section repeats either one record per step (step n is record
 *   `n % records` of the fixture) or every record of the fixture per step (lockstep), which is how
 *   CycloneDX vulnerabilities of copy n can refer to the components of copy n.
 * - copy: `floor(n / records)` for one-record steps, `n` for lockstep ones.
 */
import { fileURLToPath } from 'node:url';

/** The real scan fixtures the repository carries (`test/fixtures/scans/`, read-only; ends in `/`). */
export const FIXTURES = fileURLToPath(new URL('../../test/fixtures/scans/', import.meta.url));

/** Text around repeated sections: `parts.length === sections.length + 1`. */
export interface Layout {
  parts: string[];
  sections: Section[];
}

/** A repeated section of a {@link Layout}. */
export interface Section {
  /** The text of step `n`, without the separator. */
  step(n: number): string;
  /** Between two steps: `,` plus indentation in a JSON array, '' in XML (records keep their trailing whitespace). */
  separator: string;
}

/** Rewrites one fixture record for step `n` of copy `copy`. */
export type Render<T> = (record: T, n: number, copy: number) => string;

/** One record per step. */
export function eachRecord<T>(records: readonly T[], render: Render<T>, separator = ''): Section {
  if (records.length === 0) throw new Error('a section needs at least one record');
  return {
    separator,
    step: (n) => render(records[n % records.length]!, n, Math.floor(n / records.length)),
  };
}

/** Every record of the fixture per step, rewritten for copy `n`. */
export function lockstep<T>(records: readonly T[], render: Render<T>, separator = ''): Section {
  if (records.length === 0) throw new Error('a section needs at least one record');
  return { separator, step: (n) => records.map((r) => render(r, n, n)).join(separator) };
}

/** How to find one section's records in a fixture's text. */
export interface TextSection {
  /** Global regex matching one record, with the whitespace after it (records must be contiguous). */
  record: RegExp;
  /** Records are searched after this marker (e.g. `<components>`, so metadata's component is skipped). */
  after?: string;
  /** Makes the section from the records found. */
  section(records: string[]): Section;
}

/** Cuts an XML fixture into fixed parts and sections of contiguous records, in document order. */
export function textLayout(text: string, specs: readonly TextSection[]): Layout {
  const parts: string[] = [];
  const sections: Section[] = [];
  let cursor = 0;
  for (const spec of specs) {
    const marker = spec.after === undefined ? cursor : text.indexOf(spec.after, cursor);
    if (marker < 0) throw new Error(`marker ${spec.after} not found`);
    spec.record.lastIndex = marker + (spec.after?.length ?? 0);
    const records: string[] = [];
    let start = -1;
    let end = -1;
    for (let m = spec.record.exec(text); m; m = spec.record.exec(text)) {
      if (start < 0) start = m.index;
      else if (m.index !== end) break;
      records.push(m[0]);
      end = m.index + m[0].length;
    }
    if (records.length === 0) throw new Error(`no records match ${spec.record}`);
    parts.push(text.slice(cursor, start));
    sections.push(spec.section(records));
    cursor = end;
  }
  parts.push(text.slice(cursor));
  return { parts, sections };
}

/** One repeated array of a JSON fixture, by its path from the root. */
export interface JsonSection {
  path: readonly (string | number)[];
  /** Rewrites one element (a fresh copy is the caller's business: do not mutate `record`). */
  rewrite(record: unknown, n: number, copy: number): unknown;
  /** Every element of the fixture array per step (see {@link lockstep}). @defaultValue false */
  lockstep?: boolean;
}

/**
 * Cuts a JSON fixture into fixed parts and repeated arrays. The fixed parts are the fixture
 * re-serialised with its own indentation (`indent`, 0 for compact); elements are serialised with
 * the same indentation, shifted to their depth, so the output reads like the producer's own.
 */
export function jsonLayout(doc: unknown, indent: number, specs: readonly JsonSection[]): Layout {
  const copy = structuredClone(doc) as Record<string, unknown>;
  const marks = specs.map((_, i) => `\u0000bench-section-${i}\u0000`);
  const records = specs.map((spec, i) => {
    const parent = spec.path.slice(0, -1).reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], copy);
    const key = spec.path[spec.path.length - 1]!;
    const list = (parent as Record<string | number, unknown>)[key];
    if (!Array.isArray(list) || list.length === 0) throw new Error(`no records at ${spec.path.join('.')}`);
    (parent as Record<string | number, unknown>)[key] = [marks[i]];
    return list as unknown[];
  });
  const text = JSON.stringify(copy, null, indent);
  const parts: string[] = [];
  const sections: Section[] = [];
  let cursor = 0;
  specs.forEach((spec, i) => {
    const at = text.indexOf(JSON.stringify(marks[i]), cursor);
    const lineStart = text.lastIndexOf('\n', at) + 1;
    const pad = indent > 0 ? text.slice(lineStart, at) : '';
    const render = (r: unknown, n: number, c: number) => {
      const json = JSON.stringify(spec.rewrite(r, n, c), null, indent);
      return pad === '' ? json : json.replaceAll('\n', `\n${pad}`);
    };
    const separator = indent > 0 ? `,\n${pad}` : ',';
    parts.push(text.slice(cursor, at));
    sections.push(
      spec.lockstep ? lockstep(records[i]!, render, separator) : eachRecord(records[i]!, render, separator),
    );
    cursor = at + JSON.stringify(marks[i]).length;
  });
  parts.push(text.slice(cursor));
  return { parts, sections };
}

/** The indentation of a pretty-printed JSON text (0 when compact). */
export function indentOf(text: string): number {
  return /^[{[]\s*\n( +)\S/.exec(text.trimStart())?.[1]?.length ?? 0;
}

/** `10.x.y.z` for host number `n`. */
export const ip = (n: number): string => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

/** A package URL with `-b<copy>` appended to its name: a new package, the same version and qualifiers. */
export function renamePurl(purl: string, copy: number): string {
  const end = purl.search(/[@?#]/);
  const path = end < 0 ? purl : purl.slice(0, end);
  return `${path}-b${copy}${end < 0 ? '' : purl.slice(end)}`;
}

/**
 * A new bom-ref for copy `copy`, the same function for components and the refs that point at
 * them: purl refs get {@link renamePurl}, UUIDs a new last group, anything else a suffix.
 */
export function newRef(ref: string, copy: number): string {
  if (ref.startsWith('pkg:')) return renamePurl(ref, copy);
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref))
    return `${ref.slice(0, 24)}${copy.toString(16).padStart(12, '0')}`;
  return `${ref}-b${copy}`;
}
