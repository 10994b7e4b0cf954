import type { LabelledRow } from './dataset.js';

/**
 * Feature extraction of the in-house model. Only signals the service has at triage
 * time are used (docs/triage.md#enrichment): the KEV flag, the CVSS base score and vector (the
 * request's own or the enrichment store's), and the finding's free text.
 *
 * EPSS is deliberately not a feature: the labelled data carries no EPSS, so a weight
 * for it could never be learned. The safety policy still applies EPSS floors.
 *
 * Features are named strings; the model file lists the names it was trained on, so
 * weights are aligned by name and a name the model does not know is ignored.
 * Changing what a name means requires a new `FEATURE_SCHEMA`.
 */
export const FEATURE_SCHEMA = 'inhouse-features/1';

export interface FeatureInput {
  kev: boolean;
  /** CVSS base score in [0, 10], or null when unknown. */
  cvssScore: number | null;
  /** CVSS v3.x or v4.0 vector string, or null. */
  cvssVector: string | null;
  /** `modelText` of the description; only the first `TEXT_LIMIT` characters count. */
  text: string;
  /** The CVE id, when the finding has one (the stacked stage uses its year and number). */
  cve?: string | null;
}

/** Sparse feature vector: parallel arrays of feature names and values. */
export interface NamedFeatures {
  names: string[];
  values: number[];
}

/** The training descriptions are cut at 500 characters; cut triage text the same way. */
export const TEXT_LIMIT = 500;

/**
 * The text the model reads, the same transformation at training and at triage time
 * (src/domain/inhouse/README.md#model): the description (the title only when there is no
 * description), white space collapsed to single spaces and trimmed, then its first `TEXT_LIMIT`
 * characters. This is how the labelled file's descriptions were made (none has a line break or two
 * spaces in a row; 7,107 are cut at exactly 500 characters), so a record's text is the same whether
 * it comes from the file or from a scanner's finding with the full description.
 */
export function modelText(description: string | null | undefined, title = ''): string {
  const text = (description?.trim() ? description : title).replace(/\s+/g, ' ').trimStart();
  // A text of the limit or longer is cut as the file's were (a cut may end in a space, and a file
  // row of 500 characters must stay as it is); a shorter one was trimmed whole.
  return text.length >= TEXT_LIMIT ? text.slice(0, TEXT_LIMIT) : text.trimEnd();
}

/** The model's input for a labelled row: the same fields a triage request gives it. */
export function rowFeatureInput(row: LabelledRow): FeatureInput {
  return {
    kev: row.kev,
    cvssScore: row.cvssScore,
    cvssVector: row.cvssVector,
    text: modelText(row.description),
    cve: row.cve,
  };
}

/** Words dropped before n-grams are formed (`tokenize`); the compiled predictor drops the same. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  'a an and are as at be by can for from has have in is it its of on or that the this to was which with via'.split(
    ' ',
  ),
);

export const V3_METRICS = ['AV', 'AC', 'PR', 'UI', 'S', 'C', 'I', 'A'] as const;
export const V4_METRICS = ['AV', 'AC', 'AT', 'PR', 'UI', 'VC', 'VI', 'VA', 'SC', 'SI', 'SA'] as const;

/** Lower-cased word tokens (letters, digits), without stopwords and bare numbers. */
export function tokenize(text: string): string[] {
  return text
    .slice(0, TEXT_LIMIT)
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((t) => t.length >= 2 && !STOPWORDS.has(t) && !/^\d+$/.test(t));
}

/** Distinct unigram and bigram terms of a text, in first-seen order. */
export function textTerms(text: string): string[] {
  const tokens = tokenize(text);
  const terms = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    terms.add(tokens[i] as string);
    if (i + 1 < tokens.length) terms.add(`${tokens[i]} ${tokens[i + 1]}`);
  }
  return [...terms];
}

/**
 * Parses a CVSS v3.x / v4.0 vector into its base metrics. Returns null for anything
 * else (v2, garbage): the score alone is then used.
 */
export function parseCvssVector(
  vector: string | null,
): { version: 'v3' | 'v4'; metrics: Record<string, string> } | null {
  if (!vector) return null;
  const s = vector.trim();
  let end = s.indexOf('/');
  if (end < 0) end = s.length;
  const head = s.slice(0, end);
  const version = head === 'CVSS:3.1' || head === 'CVSS:3.0' ? 'v3' : head === 'CVSS:4.0' ? 'v4' : null;
  if (!version) return null;
  // Each `/`-separated part `K:V[:...]` with K one to three capitals and V one capital; a later part wins.
  const metrics: Record<string, string> = {};
  let at = end + 1;
  while (at <= s.length) {
    let next = s.indexOf('/', at);
    if (next < 0) next = s.length;
    let k = at;
    while (k < next && isCapital(s.charCodeAt(k))) k++;
    const keyLength = k - at;
    if (keyLength >= 1 && keyLength <= 3 && k + 2 <= next && s.charCodeAt(k) === 58) {
      const v = s.charCodeAt(k + 1);
      if (isCapital(v) && (k + 2 === next || s.charCodeAt(k + 2) === 58)) {
        metrics[s.slice(at, k)] = s[k + 1] as string;
      }
    }
    at = next + 1;
  }
  const required = version === 'v3' ? V3_METRICS : V4_METRICS;
  for (const m of required) if (metrics[m] === undefined) return null;
  return { version, metrics };
}

function isCapital(ch: number): boolean {
  return ch >= 65 && ch <= 90;
}

/**
 * The structured (non-text) features of an input. Score buckets beside the scaled
 * score let a linear model express the non-linear jumps CVSS severity bands carry.
 */
export function structuredFeatures(
  input: FeatureInput,
  parsed: ReturnType<typeof parseCvssVector> = parseCvssVector(input.cvssVector),
): NamedFeatures {
  const names: string[] = [];
  const values: number[] = [];
  const on = (name: string, value = 1): void => {
    names.push(name);
    values.push(value);
  };
  if (input.kev) on('kev');
  const score = input.cvssScore;
  if (score === null || !Number.isFinite(score)) {
    on('cvss:absent');
  } else {
    const s = Math.min(10, Math.max(0, score));
    on('cvss:score', s / 10);
    on(
      s >= 9
        ? 'cvss:band:critical'
        : s >= 7
          ? 'cvss:band:high'
          : s >= 4
            ? 'cvss:band:medium'
            : 'cvss:band:low',
    );
  }
  if (!parsed) {
    on('vector:absent');
  } else if (parsed.version === 'v3') {
    const m = parsed.metrics;
    for (const k of V3_METRICS) on(`v3:${k}:${m[k]}`);
    on(`v3:CIA:${m.C}${m.I}${m.A}`);
    on(`v3:AVPRUI:${m.AV}${m.PR}${m.UI}`);
  } else {
    const m = parsed.metrics;
    for (const k of V4_METRICS) on(`v4:${k}:${m[k]}`);
    on(`v4:VCIA:${m.VC}${m.VI}${m.VA}`);
    on(`v4:AVPRUI:${m.AV}${m.PR}${m.UI}`);
  }
  return { names, values };
}

/** All features of an input: structured ones plus `t:<term>` for each text term. */
export function extractFeatures(input: FeatureInput): NamedFeatures {
  const f = structuredFeatures(input);
  for (const term of textTerms(input.text)) {
    f.names.push(`t:${term}`);
    f.values.push(1);
  }
  return f;
}
