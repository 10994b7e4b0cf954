/**
 * The record every export format writes: one case with its current triage and enrichment
 * (docs/exports.md). Camel-case and plain data, so the
 * serializers are pure functions of it and the query that feeds them lives in the store.
 */
export type ExportSeverity = 'CRITICAL' | 'HIGH' | 'MEDIUM' | 'LOW' | 'INFO';
export type ExportCaseStatus = 'open' | 'in_progress' | 'resolved' | 'risk_accepted' | 'false_positive';

/** The current triage answer of a case (docs/triage.md#request-and-answer field names). */
export interface ExportTriage {
  priority: ExportSeverity;
  recommendedAction: string;
  reasoning: string;
  confidenceScore: number;
  severityOverride: ExportSeverity | null;
  model: string;
  triagedAt: string;
  policyVersion: string;
}

export interface ExportCase {
  id: string;
  fingerprint: string;
  title: string;
  severity: ExportSeverity;
  status: ExportCaseStatus;
  scanner: string;
  ruleId: string | null;
  cveIds: string[];
  cweIds: string[];
  cvssScore: number | null;
  cvssVector: string | null;
  asset: string | null;
  host: string | null;
  ip: string | null;
  fqdn: string | null;
  component: string | null;
  componentVersion: string | null;
  purl: string | null;
  file: string | null;
  line: number | null;
  port: number | null;
  protocol: string | null;
  kev: boolean;
  epss: number | null;
  firstSeen: string;
  lastSeen: string;
  firstScanId: string;
  lastScanId: string;
  sightings: number;
  createdAt: string;
  updatedAt: string;
  triage: ExportTriage | null;
  triageStale: boolean;
}

/** Facts about the export itself, written into the formats that carry a header. */
export interface ExportMeta {
  /** Names the producing tool in SARIF and CycloneDX. */
  toolName: string;
  toolVersion: string;
  /** Base URL of the service, for links back to a case; empty when unknown. */
  baseUrl: string;
  generatedAt: Date;
  /** A fresh UUID per export: the CycloneDX serial number. */
  serial: string;
}

/** The urgency an export reports: the triage's priority when there is one, else the scanner's severity. */
export function effectivePriority(c: ExportCase): ExportSeverity {
  return c.triage?.priority ?? c.severity;
}

/** NVD's page for a CVE id. */
export function nvdUrl(cve: string): string {
  return `https://nvd.nist.gov/vuln/detail/${encodeURIComponent(cve)}`;
}

/** A link back to the case in the service, or null when the base URL is unknown. */
export function caseUrl(meta: ExportMeta, c: ExportCase): string | null {
  return meta.baseUrl ? `${meta.baseUrl.replace(/\/+$/, '')}/api/v1/cases/${c.id}` : null;
}

/**
 * A case as JSON Lines writes it: the fields of `GET /api/v1/cases/:id` without evidence and
 * history, plus what an export adds (EPSS, the newest sighting's location, the triage).
 */
export function caseJsonView(c: ExportCase) {
  return {
    object: 'case' as const,
    id: c.id,
    fingerprint: c.fingerprint,
    title: c.title,
    severity: c.severity,
    status: c.status,
    scanner: c.scanner,
    ruleId: c.ruleId,
    cveIds: c.cveIds,
    cweIds: c.cweIds,
    cvssScore: c.cvssScore,
    cvssVector: c.cvssVector,
    kev: c.kev,
    epss: c.epss,
    asset: {
      name: c.asset,
      host: c.host,
      ip: c.ip,
      fqdn: c.fqdn,
      component: c.component,
      componentVersion: c.componentVersion,
      purl: c.purl,
      file: c.file,
      line: c.line,
    },
    port: c.port,
    protocol: c.protocol,
    firstSeen: c.firstSeen,
    lastSeen: c.lastSeen,
    firstScanId: c.firstScanId,
    lastScanId: c.lastScanId,
    sightings: c.sightings,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    triage: c.triage,
    triageStale: c.triageStale,
  };
}
