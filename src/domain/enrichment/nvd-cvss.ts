import { malformed } from './import-error.js';
import { CVE_ID } from './formats.js';

/** The CVSS base score chosen for one CVE from its NVD metrics. */
export interface CvssChoice {
  score: number;
  version: '4.0' | '3.1' | '3.0' | '2.0';
  vector: string | null;
  /** The metric's `source`, e.g. `nvd@nist.gov` or a CNA's address. */
  source: string | null;
  type: 'Primary' | 'Secondary';
}

/** What one NVD API 2.0 `vulnerabilities[]` element means for `cvss_scores`. */
export type NvdRecord =
  | { cveId: string; kind: 'score'; cvss: CvssChoice }
  /** Rejected CVEs lose their stored score: NVD withdraws their metrics. */
  | { cveId: string; kind: 'rejected' }
  | { cveId: string; kind: 'no-metrics' };

/** Newest CVSS version first: the order in which a version wins (docs/triage.md#enrichment, CveEnrichment.cvssScore). */
const VERSIONS = [
  ['cvssMetricV40', '4.0'],
  ['cvssMetricV31', '3.1'],
  ['cvssMetricV30', '3.0'],
  ['cvssMetricV2', '2.0'],
] as const;

/**
 * Picks the score to keep: the newest CVSS version present wins; within a version, a
 * `Primary` metric (NVD's own assessment) wins over `Secondary` ones (CNAs'), and the
 * first listed wins among equals. Null when there are no CVSS metrics at all.
 * Throws `malformed_input` on metrics that do not have the API 2.0 shape.
 */
export function chooseCvss(metrics: unknown, where: string): CvssChoice | null {
  if (metrics === undefined || metrics === null) return null;
  if (typeof metrics !== 'object' || Array.isArray(metrics))
    throw malformed('metrics is not an object', where);
  const m = metrics as Record<string, unknown>;
  for (const [key, version] of VERSIONS) {
    const list = m[key];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) throw malformed(`${key} is not an array`, where);
    const parsed = list.map((entry, i) => parseMetric(entry, version, `${where} ${key}[${i}]`));
    const chosen = parsed.find((p) => p.type === 'Primary') ?? parsed[0];
    if (chosen) return chosen;
  }
  return null;
}

function parseMetric(entry: unknown, version: CvssChoice['version'], where: string): CvssChoice {
  if (typeof entry !== 'object' || entry === null) throw malformed('not an object', where);
  const e = entry as {
    type?: unknown;
    source?: unknown;
    cvssData?: { baseScore?: unknown; vectorString?: unknown };
  };
  const score = e.cvssData?.baseScore;
  if (typeof score !== 'number' || !(score >= 0 && score <= 10)) {
    throw malformed(`cvssData.baseScore ${JSON.stringify(score)} is not a number in [0, 10]`, where);
  }
  const vector = e.cvssData?.vectorString;
  return {
    score,
    version,
    vector: typeof vector === 'string' ? vector : null,
    source: typeof e.source === 'string' ? e.source : null,
    type: e.type === 'Primary' ? 'Primary' : 'Secondary',
  };
}

/** Reads one element of an NVD API 2.0 `vulnerabilities` array. */
export function parseNvdVulnerability(raw: unknown, index: number): NvdRecord {
  const where = `vulnerabilities[${index}]`;
  const cve = (raw as { cve?: unknown } | null)?.cve;
  if (typeof cve !== 'object' || cve === null) throw malformed('no "cve" object', where);
  const c = cve as { id?: unknown; vulnStatus?: unknown; metrics?: unknown };
  if (typeof c.id !== 'string' || !CVE_ID.test(c.id.trim()))
    throw malformed(`cve.id ${JSON.stringify(c.id)} is not a CVE id`, where);
  const cveId = c.id.trim().toUpperCase();
  if (c.vulnStatus === 'Rejected') return { cveId, kind: 'rejected' };
  const cvss = chooseCvss(c.metrics, `${where} (${cveId})`);
  return cvss ? { cveId, kind: 'score', cvss } : { cveId, kind: 'no-metrics' };
}
