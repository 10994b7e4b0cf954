import type { Case, CaseSeverity } from '../cases/case.js';

/**
 * What every export format writes: a case (docs/exports.md) as every case read returns it, with
 * its current triage, its enrichment and its newest sighting. Plain data, so the serializers are
 * pure functions of it and the query that feeds them is the cases area's one case statement.
 */
export type ExportCase = Case;

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
export function effectivePriority(c: Case): CaseSeverity {
  return c.triage?.priority ?? c.severity;
}

/** NVD's page for a CVE id. */
export function nvdUrl(cve: string): string {
  return `https://nvd.nist.gov/vuln/detail/${encodeURIComponent(cve)}`;
}

/** A link back to the case in the service, or null when the base URL is unknown. */
export function caseUrl(meta: ExportMeta, c: Case): string | null {
  return meta.baseUrl ? `${meta.baseUrl.replace(/\/+$/, '')}/api/v1/cases/${c.id}` : null;
}
