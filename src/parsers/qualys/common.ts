import { extractCves, nonEmpty, uniq } from '../format-parser.js';
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
    if (attrs.cveid) this.cves.push(...extractCves(attrs.cveid));
  }

  /** Call on each descendant close; `path` is the full path including the closing element. */
  add(path: readonly string[], text: string): void {
    // Most leaves are direct children; joining a one-element slice would allocate twice for nothing.
    const rel = path.length === this.depth + 1 ? path[this.depth]! : path.slice(this.depth).join('/');
    if (rel.startsWith('CVE_ID_LIST/') || rel === 'CVE_ID') {
      this.cves.push(...extractCves(text));
      return;
    }
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
