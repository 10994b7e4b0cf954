import type { ScopeCollector } from './scope.js';
import type { XmlEngineName } from './xml/xml-engine.js';
import { EXCERPT_TRUNCATION_MARKER, type FindingDraft, type ParseLimits } from './types.js';

/** What every format parser receives besides its input. */
export interface ParserContext {
  limits: ParseLimits;
  /** Parsers push human-readable notes here (e.g. "BOM has components but no vulnerabilities"). */
  notes: string[];
  xmlEngine: XmlEngineName;
  /** Directory for the Qualys asset-report spill file. */
  tmpDir: string;
  /**
   * What the file covered (docs/ingestion.md#rescans): the parse adds each finding's scanner and
   * host; a parser adds the hosts its format lists without findings and the file's subject.
   */
  scope: ScopeCollector;
}

/**
 * A format parser: pulls byte chunks and yields drafts in file order. It must yield after each
 * input chunk that produced drafts, so the caller's pull rate bounds how far it reads ahead.
 */
export type FormatParser = (
  chunks: AsyncIterable<Buffer>,
  ctx: ParserContext,
) => AsyncGenerator<FindingDraft[], void, undefined>;

/** Cuts `text` to its longest prefix that fits `maxBytes` UTF-8 bytes with the marker, on a character boundary. */
export function boundExcerpt(text: string, maxBytes: number): string {
  // Most texts are short: a character is at most 3 UTF-8 bytes per UTF-16 unit.
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const budget = Math.max(0, maxBytes - Buffer.byteLength(EXCERPT_TRUNCATION_MARKER, 'utf8'));
  // The kept prefix has at most `budget` characters (each is at least one byte).
  let chars = budget;
  const last = text.charCodeAt(chars - 1);
  if (last >= 0xd800 && last <= 0xdbff) chars--; // not half a surrogate pair
  const head = Buffer.from(text.slice(0, chars), 'utf8');
  let end = Math.min(budget, head.length);
  // Back to the start of a character: never cut a multi-byte sequence.
  if (end < head.length) while (end > 0 && (head[end]! & 0xc0) === 0x80) end--;
  return head.subarray(0, end).toString('utf8') + EXCERPT_TRUNCATION_MARKER;
}

/** Unique, trimmed, non-empty strings in first-seen order. */
export function uniq(values: Iterable<string | null | undefined>): string[] {
  const seen = new Set<string>();
  for (const v of values) {
    const t = v?.trim();
    if (t) seen.add(t);
  }
  return [...seen];
}

const CVE_RE = /CVE-\d{4}-\d{4,}/gi;

/** Every CVE id mentioned in `text`, upper-cased. */
export function extractCves(text: string | null | undefined): string[] {
  return uniq((text ?? '').match(CVE_RE)?.map((c) => c.toUpperCase()) ?? []);
}

/**
 * Appends every CVE id mentioned in `text`, upper-cased, to `out`, duplicates included: for a
 * record that collects CVEs from many leaves and removes duplicates once at the end (`uniq`
 * keeps the first of each, so the result is what `extractCves` per leaf would have given).
 */
export function collectCves(text: string, out: string[]): void {
  if (text.length < 13) return; // shorter than any CVE id
  const found = text.match(CVE_RE);
  if (found) for (const c of found) out.push(c.toUpperCase());
}

// Advisory ids other than CVEs that databases and scanners use as a vulnerability's aliases:
// GitHub (GHSA), OSV's ecosystems (PYSEC, RUSTSEC, GO, GSD, OSV, MAL).
const ALIAS_RE = /\b(?:GHSA(?:-[23456789cfghjmpqrvwx]{4}){3}|(?:PYSEC|RUSTSEC|GO|GSD|OSV|MAL)-\d{4}-\d+)\b/gi;

/**
 * Every advisory id other than a CVE mentioned in `text` (docs/cases.md#one-vulnerability-one-case):
 * GHSA ids lower-cased after their prefix as GitHub writes them, the others upper-cased.
 */
export function extractAliases(text: string | null | undefined): string[] {
  return uniq(
    (text ?? '')
      .match(ALIAS_RE)
      ?.map((a) => (/^ghsa/i.test(a) ? `GHSA${a.slice(4).toLowerCase()}` : a.toUpperCase())) ?? [],
  );
}

/** Normalises "CWE-79", "79" or "cwe-79" to "CWE-79"; null when no number. */
export function normaliseCwe(value: string | number | null | undefined): string | null {
  const m = /(\d+)/.exec(String(value ?? ''));
  return m ? `CWE-${Number(m[1])}` : null;
}

/** Empty or whitespace-only strings become null. */
export function nonEmpty(value: string | null | undefined): string | null {
  const t = value?.trim();
  return t ? t : null;
}

/** Parses an integer port; 0 and non-numbers become null (Nessus uses port 0 for host-level findings). */
export function parsePort(value: string | number | null | undefined): number | null {
  const n = typeof value === 'number' ? value : Number.parseInt(String(value ?? ''), 10);
  return Number.isInteger(n) && n > 0 && n <= 65535 ? n : null;
}

const IPV4_RE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** True for dotted IPv4 or a plausible IPv6 literal. */
export function isIpAddress(value: string | null | undefined): boolean {
  const v = value?.trim() ?? '';
  const m = IPV4_RE.exec(v);
  if (m) return m.slice(1).every((o) => Number(o) <= 255);
  return v.includes(':') && /^[0-9a-f:.]+$/i.test(v);
}
