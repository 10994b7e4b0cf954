import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import type { Case } from './case.js';

/**
 * What a case's triage request is built from (`domain/triage/case-triage-request.ts` builds it):
 * the case's normalised fields, its newest sighting's description and CVSS vector, and the asset
 * context of the scan that sighted it.
 */

/** Asset context of the scan a case is triaged for (the upload's query). */
export interface CaseAssetContext {
  name: string | null;
  environment: string | null;
  criticality: string | null;
  internetExposed: boolean | null;
}

/** The normalised fields of a case (and its newest sighting) a triage request is built from. */
export interface CaseTriageSource extends Pick<Case, 'asset' | 'host' | 'ip' | 'fqdn' | 'component'> {
  title: string;
  severity: string;
  cveIds: readonly string[];
  cvssScore: number | string | null;
  /** The newest sighting's description. */
  description: string | null;
  /** The newest sighting's CVSS vector. */
  cvssVector: string | null;
  /** The scan's asset context; null when the scan named none. */
  context: CaseAssetContext | null;
}

/**
 * What the triage requests of `caseIds` are built from, in their order: each case with its
 * newest sighting in `scanId` (a scan's triage) or in its last scan, and that scan's asset context.
 */
export async function caseRequestSources(
  db: Db,
  workspaceId: string,
  caseIds: readonly string[],
  scanId: string | null,
): Promise<(CaseTriageSource & { id: string })[]> {
  const { rows } = await db.query<{
    id: string;
    title: string;
    severity: string;
    cve_ids: string[];
    cvss_score: string | null;
    description: string | null;
    cvss_vector: string | null;
    asset: string | null;
    host: string | null;
    ip: string | null;
    fqdn: string | null;
    component: string | null;
    asset_name: string | null;
    asset_environment: string | null;
    asset_criticality: string | null;
    asset_internet_exposed: boolean | null;
  }>(
    sql`SELECT c.id, c.title, c.severity, c.cve_ids, c.cvss_score, c.asset, c.host, c.ip, c.fqdn, c.component,
            f.description, f.cvss_vector, s.asset_name, s.asset_environment, s.asset_criticality,
            s.asset_internet_exposed
       FROM unnest(${caseIds}::uuid[]) WITH ORDINALITY AS k(id, ord)
       JOIN cases c ON c.id = k.id AND c.workspace_id = ${workspaceId}
       LEFT JOIN scans s ON s.id = coalesce(${scanId}::uuid, c.last_scan_id)
       LEFT JOIN LATERAL (
         SELECT f.description, coalesce(f.cvss_vector, f.cvss_v3_vector, f.cvss_v2_vector) AS cvss_vector
           FROM findings f
          WHERE f.workspace_id = c.workspace_id AND f.fingerprint = c.fingerprint AND f.scan_id = s.id
          ORDER BY f.record_index DESC LIMIT 1) f ON true
      ORDER BY k.ord`,
  );
  return rows.map((r) => ({
    id: r.id,
    title: r.title,
    severity: r.severity,
    cveIds: r.cve_ids,
    cvssScore: r.cvss_score,
    description: r.description,
    cvssVector: r.cvss_vector,
    asset: r.asset,
    host: r.host,
    ip: r.ip,
    fqdn: r.fqdn,
    component: r.component,
    context:
      r.asset_name === null &&
      r.asset_environment === null &&
      r.asset_criticality === null &&
      r.asset_internet_exposed === null
        ? null
        : {
            name: r.asset_name,
            environment: r.asset_environment,
            criticality: r.asset_criticality,
            internetExposed: r.asset_internet_exposed,
          },
  }));
}
