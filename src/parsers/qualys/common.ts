import { collectCves, nonEmpty, uniq } from '../format-parser.js';
import { parseScore } from '../severity.js';
import type { FindingDraft } from '../types.js';

/** Qualys writes CVSS as "9.3 (AV:N/AC:M/...)" or just "9.3"; "-" means none. */
export function parseQualysCvss(text: string | null | undefined): {
  score: number | null;
  vector: string | null;
} {
  const t = (text ?? '').trim();
  const m = /^([\d.]+)\s*(?:\((.*)\))?/.exec(t);
  if (!m) return { score: null, vector: null };
  return { score: parseScore(m[1]), vector: nonEmpty(m[2]) };
}

/** CVSS fields of a draft from Qualys v2 and v3 base strings. */
export function qualysCvssFields(
  v2Text: string | undefined,
  v3Text: string | undefined,
): Partial<FindingDraft> {
  const v2 = parseQualysCvss(v2Text);
  const v3 = parseQualysCvss(v3Text);
  const v3Vector = v3.vector && !v3.vector.startsWith('CVSS:') ? `CVSS:3.0/${v3.vector}` : v3.vector;
  return {
    cvssScore: v3.score ?? v2.score,
    cvssVector: v3.score !== null ? v3Vector : v2.vector,
    cvssV3Score: v3.score,
    cvssV3Vector: v3Vector,
    cvssV2Score: v2.score,
    cvssV2Vector: v2.vector,
  };
}

/**
 * Collects an element's descendants as `relative/path → text`, plus every CVE id seen in any
 * `ID`/`CVE_ID` text or `cveid` attribute. Used for VULN, INFO, PRACTICE, DETECTION and glossary
 * VULN_DETAILS records, whose layouts differ but whose leaves are flat.
 */
export class RecordCollector {
  readonly fields = new Map<string, string>();
  readonly cves: string[] = [];

  constructor(
    readonly depth: number,
    readonly attrs: Record<string, string>,
  ) {
    if (attrs.cveid) collectCves(attrs.cveid, this.cves);
  }

  /** Call on each descendant close; `path` is the full path including the closing element. */
  add(path: readonly string[], text: string): void {
    const d = this.depth;
    const first = path[d]!;
    const direct = path.length === d + 1;
    // Anything under CVE_ID_LIST, or a direct CVE_ID: decided on the first name, not on a
    // joined path (a record's CVE list is most of its leaves, three per CVE).
    if (direct ? first === 'CVE_ID' : first === 'CVE_ID_LIST') {
      collectCves(text, this.cves);
      return;
    }
    // Most leaves are direct children; joining a one-element slice would allocate twice for nothing.
    const rel = direct ? first : path.slice(d).join('/');
    if (!this.fields.has(rel)) this.fields.set(rel, text);
  }

  get(rel: string): string | undefined {
    return this.fields.get(rel);
  }

  cveIds(): string[] {
    return uniq(this.cves);
  }
}

/** The first non-empty of several relative paths. */
export function firstField(r: RecordCollector, ...paths: string[]): string | null {
  for (const p of paths) {
    const v = nonEmpty(r.get(p));
    if (v) return v;
  }
  return null;
}

/** True when the record lists at least one public exploit (EXPLOITABILITY, possibly under CORRELATION). */
export function hasExploit(r: RecordCollector): boolean | null {
  for (const key of r.fields.keys()) if (key.endsWith('EXPLT_LIST/EXPLT')) return true;
  return null;
}
