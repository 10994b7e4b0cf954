/**
 * Normalised finding shape shared by every scan parser (docs/ingestion.md#parsing, docs/ingestion.md#formats).
 *
 * Glossary:
 * - record: one unit of scanner output that yields findings (a Nessus ReportItem, an OpenVAS
 *   result, a Qualys VULN/DETECTION, a SARIF result, a CycloneDX vulnerability×component pair,
 *   a CLI finding).
 * - recordIndex: the 0-based position of the finding in the parser's output order, which is a
 *   pure function of the file's bytes, so persistence can upsert keyed by (scan, recordIndex).
 * - fingerprint: SHA-256 of the case identity (docs/cases.md#deduplication), see `fingerprint.ts`.
 */

/** Severity bands, highest first. */
export type Severity = 'CRITICAL' | 'HIGH' | 'MEDIUM' | 'LOW' | 'INFO';

/** Where a finding was seen. Network scanners fill host/ip/fqdn/os; SCA fills component; SAST fills file/line. */
export interface FindingAsset {
  host: string | null;
  ip: string | null;
  fqdn: string | null;
  os: string | null;
  component: string | null;
  componentVersion: string | null;
  purl: string | null;
  file: string | null;
  line: number | null;
}

/**
 * A normalised finding as handed to persistence, but for its format: `finding.ts` adds it (the
 * formats come from the registry, which imports every format's parser, which imports this file).
 */
export interface FindingFields {
  /** Position in the parser output; stable across re-parses of the same bytes. */
  recordIndex: number;
  /**
   * Case identity hash (docs/cases.md#deduplication), under the upload's asset for a finding without a host
   * of its own (`attributedAsset` in `fingerprint.ts`, docs/ingestion.md#asset-context; `completeFinding` applies it).
   */
  fingerprint: string;
  /** Scanner or tool name, e.g. "Nessus", "Qualys", "OpenVAS", the SARIF driver name. */
  scanner: string;
  /** Plugin id, QID, NVT OID, SARIF ruleId or CycloneDX vulnerability id. */
  ruleId: string | null;
  title: string;
  severity: Severity;
  cveIds: string[];
  /**
   * The vulnerability's other identifiers (GHSA, OSV, a vendor's id) that the scanner gives as
   * its id, aliases or references; never a CVE (those are in `cveIds`). Two cases on one asset that
   * share a CVE or an alias are one vulnerability (docs/cases.md#one-vulnerability-one-case).
   */
  aliases: string[];
  cweIds: string[];
  /** Preferred score: CVSS v3 when present, else v2. */
  cvssScore: number | null;
  cvssVector: string | null;
  cvssV3Score: number | null;
  cvssV3Vector: string | null;
  cvssV2Score: number | null;
  cvssV2Vector: string | null;
  description: string | null;
  solution: string | null;
  /** Scanner evidence such as Nessus plugin_output or a Qualys RESULT. */
  evidence: string | null;
  asset: FindingAsset;
  port: number | null;
  protocol: string | null;
  exploitAvailable: boolean | null;
  /** Detection confidence 0..100 where the scanner states one (OpenVAS quality of detection). */
  confidence: number | null;
  /** SARIF results with suppressions are kept and marked, never dropped. */
  suppressed: boolean;
  /** SARIF partialFingerprints merged with fingerprints, when the producer supplied any. */
  producerFingerprints: Record<string, string> | null;
  /** The record as it appeared in the file, cut at `limits.maxExcerptBytes` with {@link EXCERPT_TRUNCATION_MARKER}. */
  rawExcerpt: string;
}

/** What a format parser produces; `parse-scan.ts` completes it into a `Finding` (`finding.ts`). */
export type FindingDraft = Partial<Omit<FindingFields, 'recordIndex' | 'fingerprint' | 'asset'>> & {
  title: string;
  severity: Severity;
  scanner: string;
  asset?: Partial<FindingAsset>;
};

/** Appended to a raw excerpt cut at the byte bound. */
export const EXCERPT_TRUNCATION_MARKER = '…[truncated]';

/** Resource limits that turn hostile input into a ParseError instead of memory exhaustion. */
export interface ParseLimits {
  /** Maximum nesting depth of XML elements or JSON containers. @defaultValue 256 */
  maxDepth: number;
  /** Maximum size of one text node, attribute value or JSON string, in characters. @defaultValue 8 MiB */
  maxTextBytes: number;
  /** Size bound of `rawExcerpt`. @defaultValue 4 KiB */
  maxExcerptBytes: number;
  /**
   * Size bound of each long text of a finding (`description`, `solution`, `evidence`), cut with
   * {@link EXCERPT_TRUNCATION_MARKER}, so an 8 MiB plugin output is neither copied to the main
   * thread nor stored in full for every sighting. The evidence row then keeps the first 4,000
   * characters of `evidence` (its column's bound, `finding-copy.ts`). Titles are bounded at 1 KiB.
   * @defaultValue 64 KiB
   */
  maxFieldBytes: number;
}

/** Defaults for {@link ParseLimits}. */
export const DEFAULT_LIMITS: Readonly<ParseLimits> = Object.freeze({
  maxDepth: 256,
  maxTextBytes: 8 * 1024 * 1024,
  maxExcerptBytes: 4 * 1024,
  maxFieldBytes: 64 * 1024,
});

/** Size bound of a finding's title. */
export const MAX_TITLE_BYTES = 1024;
