import { extractAliases, extractCves, nonEmpty, normaliseCwe, uniq } from '../format-parser.js';
import { SEVERITY_RANK, parseScore, severityFromCvss, severityFromText } from '../severity.js';
import { ownOrNull as own } from '../own-string.js';
import type { FindingDraft, Severity } from '../types.js';

/** A component as far as findings need it. */
export interface CdxComponent {
  name: string | null;
  group: string | null;
  version: string | null;
  purl: string | null;
}

/** One rating of a vulnerability. */
export interface CdxRating {
  score: number | null;
  severity: string | null;
  method: string | null;
  vector: string | null;
}

/** A vulnerability normalised from either JSON or XML, before the per-component split. */
export interface CdxVulnerability {
  id: string | null;
  cveRefs: string[];
  ratings: CdxRating[];
  cwes: string[];
  description: string | null;
  detail: string | null;
  recommendation: string | null;
  analysisState: string | null;
  /** bom-refs of affected components; empty means "the BOM's subject". */
  affects: string[];
  rawExcerpt: string;
}

/** Components indexed per BOM: memory stays bounded (~65 MB) whatever the BOM's size. */
export const MAX_INDEXED_COMPONENTS = 100_000;

/** Options of {@link ComponentIndex}. */
export interface ComponentIndexOptions {
  /**
   * Copy each kept string, so that it does not pin the input it was cut from. Needed for the
   * tokenizer's substrings (XML); `JSON.parse` already returns strings of their own, and copying
   * them cost a tenth of a components-heavy JSON BOM's parse (bench/parsers/README.md).
   * @defaultValue true
   */
  copyStrings?: boolean;
}

/**
 * bom-ref → component, compact (four short strings per component). Vulnerabilities refer to
 * components by bom-ref, and purl strings double as refs in older BOMs, so both are looked up:
 * a bom-ref first (the last component that declared it), else a purl (the first component with
 * it). The purl map is built at the first lookup a bom-ref does not answer, so a BOM whose
 * vulnerabilities name bom-refs never hashes its purls (half of a components-heavy BOM's
 * indexing, bench/parsers/README.md).
 * Past `max` components the rest are counted, not indexed: a finding on one of them names the
 * component by its ref (a purl ref stays a purl), and the parse says so in its notes.
 */
export class ComponentIndex {
  private readonly byRef = new Map<string, CdxComponent>();
  /** purl → first component with it; null until a lookup needs it. */
  private byPurl: Map<string, CdxComponent> | null = null;
  /** Indexed components in order, for building `byPurl`; emptied once it is built. */
  private indexed: CdxComponent[] = [];
  private readonly copyStrings: boolean;
  count = 0;
  /** Components past the bound, not indexed. */
  dropped = 0;

  constructor(
    private readonly max = MAX_INDEXED_COMPONENTS,
    options: ComponentIndexOptions = {},
  ) {
    this.copyStrings = options.copyStrings ?? true;
  }

  add(ref: string | null | undefined, c: CdxComponent): void {
    this.count++;
    if (this.count > this.max) {
      this.dropped++;
      return;
    }
    const kept = this.copyStrings
      ? { name: own(c.name), group: own(c.group), version: own(c.version), purl: own(c.purl) }
      : c;
    if (ref) this.byRef.set(this.copyStrings ? own(ref)! : ref, kept);
    if (this.byPurl === null) this.indexed.push(kept);
    else addPurl(this.byPurl, kept);
  }

  /** The note a parse adds when components went unindexed, else null. */
  boundNote(): string | null {
    return this.dropped === 0
      ? null
      : `BOM has ${this.count} components; past the first ${this.max}, findings name a component by its bom-ref only`;
  }

  get(ref: string): CdxComponent | undefined {
    const c = this.byRef.get(ref);
    if (c !== undefined) return c;
    if (this.byPurl === null) {
      this.byPurl = new Map();
      for (const k of this.indexed) addPurl(this.byPurl, k);
      this.indexed = [];
    }
    return this.byPurl.get(ref);
  }
}

function addPurl(byPurl: Map<string, CdxComponent>, c: CdxComponent): void {
  if (c.purl && !byPurl.has(c.purl)) byPurl.set(c.purl, c);
}

function worstSeverity(ratings: readonly CdxRating[]): Severity {
  let best: Severity | null = null;
  for (const r of ratings) {
    const s = r.severity
      ? severityFromText(r.severity, 'INFO')
      : r.score !== null
        ? severityFromCvss(r.score)
        : null;
    if (s && (best === null || SEVERITY_RANK[s] > SEVERITY_RANK[best])) best = s;
  }
  return best ?? 'INFO';
}

function pickRating(ratings: readonly CdxRating[], prefix: string): CdxRating | null {
  return ratings.find((r) => (r.method ?? '').toUpperCase().startsWith(prefix) && r.score !== null) ?? null;
}

/**
 * One finding per vulnerability × affected component (docs/ingestion.md#formats). An unresolvable ref is kept
 * as the component identity (a purl ref stays a purl) rather than dropping the finding.
 */
export function cdxFindings(
  v: CdxVulnerability,
  components: ComponentIndex,
  scanner: string,
): FindingDraft[] {
  const v3 = pickRating(v.ratings, 'CVSSV3');
  const v4 = pickRating(v.ratings, 'CVSSV4');
  const v2 = pickRating(v.ratings, 'CVSSV2');
  const anyScore = v.ratings.find((r) => r.score !== null)?.score ?? null;
  const v3Vector = v3?.vector ? (v3.vector.startsWith('CVSS:') ? v3.vector : `CVSS:3.0/${v3.vector}`) : null;
  const cveIds = uniq([...extractCves(v.id), ...v.cveRefs.flatMap((r) => extractCves(r))]);
  // The vulnerability's own id and its references that are not CVEs (GHSA, OSV, Snyk, OSS Index).
  const aliases = uniq(
    [v.id, ...v.cveRefs].flatMap((r) => {
      const id = r?.trim() ?? '';
      if (id === '' || /^CVE-\d{4}-\d{4,}$/i.test(id)) return [];
      const known = extractAliases(id);
      return known.length > 0 ? known : [id.slice(0, 200)];
    }),
  );
  // Vendor ids (OSS Index UUIDs, SNYK-...) say less to a reader than the CVE they reference.
  const label = extractCves(v.id)[0] ?? cveIds[0] ?? v.id ?? 'Vulnerability';
  const base: FindingDraft = {
    scanner,
    ruleId: v.id,
    title: label,
    severity: worstSeverity(v.ratings),
    cveIds,
    aliases,
    cweIds: uniq(v.cwes.map((c) => normaliseCwe(c))),
    // The headline score: v3 (what most tools and policies still speak), else v4, else v2. A v4
    // score is never stored as a v3 one.
    cvssScore: v3?.score ?? v4?.score ?? v2?.score ?? anyScore,
    cvssVector: v3 ? v3Vector : v4 ? (v4.vector ?? null) : (v2?.vector ?? null),
    cvssV3Score: v3?.score ?? null,
    cvssV3Vector: v3Vector,
    cvssV2Score: v2?.score ?? null,
    cvssV2Vector: v2?.vector ?? null,
    description: nonEmpty(v.description) ?? nonEmpty(v.detail),
    solution: nonEmpty(v.recommendation),
    // VEX analysis saying the component is not affected is a suppression, kept like SARIF's.
    suppressed: v.analysisState === 'not_affected' || v.analysisState === 'false_positive',
    rawExcerpt: v.rawExcerpt,
  };
  const refs = v.affects.length > 0 ? uniq(v.affects) : [];
  if (refs.length === 0) return [base];
  return refs.map((ref) => {
    const c = components.get(ref);
    // The group (Maven groupId, npm scope) stays in the purl; component is the plain name.
    const name = c ? c.name : ref.startsWith('pkg:') ? null : ref;
    const purl = c?.purl ?? (ref.startsWith('pkg:') ? ref : null);
    return {
      ...base,
      title: `${label} in ${c?.name ?? purl ?? ref}${c?.version ? `@${c.version}` : ''}`,
      asset: { component: name ?? purl, componentVersion: c?.version ?? null, purl },
    };
  });
}

/** Parses a rating score that may be a number or numeric string. */
export function ratingScore(v: unknown): number | null {
  return typeof v === 'number'
    ? Number.isFinite(v)
      ? v
      : null
    : parseScore(typeof v === 'string' ? v : null);
}

/**
 * The subject a BOM describes (its `metadata.component`), as a rescan's scope names it
 * (docs/ingestion.md#rescans): group and name, or its package URL without version and
 * qualifiers, so the next version's BOM is a rescan of the same subject.
 */
export function cdxSubject(c: CdxComponent): string | null {
  if (c.name) return c.group ? `${c.group}/${c.name}` : c.name;
  return c.purl ? c.purl.replace(/[?#].*$/, '').replace(/@[^@/]*$/, '') : null;
}
