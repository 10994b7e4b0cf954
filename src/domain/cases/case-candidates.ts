import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { isUuid } from '../../lib/ids.js';
import { filterWhere, type ListFilters } from './list-filters.js';

/**
 * The cases a case triage may spend AI calls on, with what ranks them (`domain/triage/case-risk.ts`
 * orders them riskiest first): the cases a completed scan names, or those a selection names.
 */

/** What ranks a case for a triage that cannot afford every case (`domain/triage/case-risk.ts`). */
export interface CaseRisk {
  id: string;
  /** One of the case's CVEs is in the KEV catalog. */
  kev: boolean;
  /** The highest EPSS score among its CVEs; null when none has one. */
  epss: number | null;
  /** Its CVSS base score; null when unknown. */
  cvss: number | null;
  severity: string;
  firstSeen: Date;
}

/** A case selection: ids, or the list filters of `GET /api/v1/cases`. */
export type CaseSelection = { caseIds: readonly string[] } | { filters: ListFilters };

/** A case's risk now: KEV membership of any of its CVEs, their highest EPSS, its CVSS (else NVD's). */
const RISK_COLUMNS = sql`c.id, c.severity, c.first_seen,
  EXISTS (SELECT 1 FROM kev_entries k WHERE k.cve_id = ANY(c.cve_ids)) AS kev,
  (SELECT max(e.epss) FROM epss_scores e WHERE e.cve_id = ANY(c.cve_ids)) AS epss,
  coalesce(c.cvss_score, (SELECT max(s.base_score) FROM cvss_scores s WHERE s.cve_id = ANY(c.cve_ids))) AS cvss`;

interface RiskRow {
  id: string;
  severity: string;
  first_seen: Date;
  kev: boolean;
  epss: number | null;
  cvss: string | null;
}

const toRisk = (r: RiskRow): CaseRisk => ({
  id: r.id,
  kev: r.kev,
  epss: r.epss === null ? null : Number(r.epss),
  cvss: r.cvss === null ? null : Number(r.cvss),
  severity: r.severity,
  firstSeen: r.first_seen,
});

/**
 * The cases a completed scan asks to triage: `all` — every case it sighted; `new` — those it
 * created (their first scan) or reopened (a resolved case it saw again: its history says so).
 */
export async function scanCaseCandidates(
  db: Db,
  scan: { id: string; workspaceId: string },
  mode: 'new' | 'all',
): Promise<CaseRisk[]> {
  const { rows } = await db.query<RiskRow>(
    sql`SELECT ${RISK_COLUMNS}
       FROM cases c
      WHERE c.workspace_id = ${scan.workspaceId}
        AND c.fingerprint IN (SELECT fingerprint FROM findings WHERE scan_id = ${scan.id})
        AND (${mode}::text = 'all' OR c.first_scan_id = ${scan.id} OR EXISTS (
              SELECT 1 FROM case_status_history h
               WHERE h.case_id = c.id AND h.actor = 'scan:' || ${scan.id}::text AND h.to_status = 'open'))`,
  );
  return rows.map(toRisk);
}

/**
 * The cases of a workspace a selection names: `caseIds` (ids of other workspaces and malformed
 * ones match nothing) or the list filters of `GET /api/v1/cases`. At most `max + 1` rows, so the
 * caller can tell a selection that is too large.
 */
export async function selectedCaseCandidates(
  db: Db,
  workspaceId: string,
  selection: CaseSelection,
  max: number,
): Promise<CaseRisk[]> {
  const where =
    'caseIds' in selection
      ? [sql`c.id = ANY(${selection.caseIds.filter(isUuid)}::uuid[])`]
      : filterWhere('c', selection.filters, 'cases');
  const { rows } = await db.query<RiskRow>(
    sql`SELECT ${RISK_COLUMNS} FROM cases c
         WHERE ${sql.join([sql`c.workspace_id = ${workspaceId}`, ...where], sql` AND `)}
         LIMIT ${max + 1}`,
  );
  return rows.map(toRisk);
}
