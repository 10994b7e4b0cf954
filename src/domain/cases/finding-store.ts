import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { seqCursor, seqPage, type Page } from '../../lib/cursor.js';
import { isUuid } from '../../lib/ids.js';
import {
  toCaseTriage,
  triageColumns,
  type CaseTriage,
  type LocationColumnsRow,
  type TriageColumnsRow,
} from './case.js';
import { filterWhere, kevColumnSql, type ListFilters, VISIBLE_FINDINGS_SQL } from './list-filters.js';

/**
 * The reads of `findings` (docs/ingestion.md#formats, docs/cases.md#lists-and-filters): the findings list and one finding, each with its
 * case's id and triage (same workspace and fingerprint) and its KEV flag, mapped to camelCase
 * here. Only findings of completed scans are visible. The ingest writes them
 * (`domain/scans/scan-writer.ts`, `domain/scans/ingest-store.ts`).
 */

/** A stored finding as read back (docs/ingestion.md#formats fields); `Finding` of `parsers/` is one being parsed. */
export interface StoredFinding {
  id: string;
  /** The insertion sequence (bigint as text): the keyset of {@link listFindings}. */
  seq: string;
  scanId: string;
  /** Its case's id (same workspace and fingerprint). */
  caseId: string | null;
  recordIndex: number;
  fingerprint: string;
  scanner: string;
  ruleId: string | null;
  title: string;
  severity: string;
  cveIds: string[];
  cweIds: string[];
  cvssScore: number | null;
  cvssVector: string | null;
  description: string | null;
  solution: string | null;
  asset: FindingAssetRecord;
  port: number | null;
  protocol: string | null;
  exploitAvailable: boolean | null;
  confidence: number | null;
  suppressed: boolean;
  kev: boolean;
  createdAt: Date;
  /** Its case's current triage, null when untriaged. */
  triage: CaseTriage | null;
  /** Its case's. */
  triageStale: boolean;
}

export interface FindingAssetRecord {
  name: string | null;
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

/** A `findings` row with its case's columns, as a read selects it: private to this store. */
interface FindingRow extends TriageColumnsRow, LocationColumnsRow {
  id: string;
  seq: string;
  scan_id: string;
  case_id: string | null;
  record_index: number;
  fingerprint: string;
  scanner: string;
  rule_id: string | null;
  title: string;
  severity: string;
  cve_ids: string[];
  cwe_ids: string[];
  cvss_score: string | null;
  cvss_vector: string | null;
  description: string | null;
  solution: string | null;
  os: string | null;
  port: number | null;
  protocol: string | null;
  exploit_available: boolean | null;
  confidence: number | null;
  suppressed: boolean;
  kev: boolean;
  created_at: Date;
  triage_stale: boolean;
}

function toFinding(f: FindingRow): StoredFinding {
  return {
    id: f.id,
    seq: f.seq,
    scanId: f.scan_id,
    caseId: f.case_id,
    recordIndex: f.record_index,
    fingerprint: f.fingerprint,
    scanner: f.scanner,
    ruleId: f.rule_id,
    title: f.title,
    severity: f.severity,
    cveIds: f.cve_ids,
    cweIds: f.cwe_ids,
    cvssScore: f.cvss_score === null ? null : Number(f.cvss_score),
    cvssVector: f.cvss_vector,
    description: f.description,
    solution: f.solution,
    asset: {
      name: f.asset,
      host: f.host,
      ip: f.ip,
      fqdn: f.fqdn,
      os: f.os,
      component: f.component,
      componentVersion: f.component_version,
      purl: f.purl,
      file: f.file,
      line: f.line,
    },
    port: f.port,
    protocol: f.protocol,
    exploitAvailable: f.exploit_available,
    confidence: f.confidence,
    suppressed: f.suppressed,
    kev: f.kev,
    createdAt: f.created_at,
    triage: toCaseTriage(f),
    triageStale: f.triage_stale,
  };
}

/** A finding's case: the case of its (workspace, fingerprint), whose id and triage it shows. */
const FINDING_CASE = sql`LEFT JOIN cases fcase ON fcase.workspace_id = f.workspace_id AND fcase.fingerprint = f.fingerprint`;
/** The finding's own columns a read maps ({@link FindingRow}): not its evidence (m020), read per case. */
const FINDING_COLUMNS = sql`f.id, f.seq, f.scan_id, f.record_index, f.fingerprint, f.scanner, f.rule_id, f.title, f.severity,
  f.cve_ids, f.cwe_ids, f.cvss_score, f.cvss_vector, f.description, f.solution, f.asset, f.host, f.ip, f.fqdn, f.os,
  f.component, f.component_version, f.purl, f.file, f.line, f.port, f.protocol, f.exploit_available, f.confidence,
  f.suppressed, f.created_at`;
const CASE_COLUMNS = sql`fcase.id AS case_id, ${triageColumns('fcase')}, coalesce(fcase.triage_stale, false) AS triage_stale`;

export async function listFindings(
  db: Db,
  workspaceId: string,
  q: ListFilters & { caseId?: string; limit: number; cursor?: string },
): Promise<Page<StoredFinding>> {
  const where = [sql`f.workspace_id = ${workspaceId}`, ...filterWhere('f', q, 'findings')];
  if (q.caseId !== undefined) {
    const caseId = isUuid(q.caseId) ? q.caseId : '00000000-0000-0000-0000-000000000000';
    where.push(
      sql`f.fingerprint = (SELECT fingerprint FROM cases WHERE id = ${caseId}::uuid AND workspace_id = ${workspaceId})`,
    );
  }
  if (q.cursor) where.push(sql`f.seq < ${seqCursor(q.cursor)}::bigint`);
  const { rows } = await db.query<FindingRow>(
    sql`SELECT ${FINDING_COLUMNS}, ${CASE_COLUMNS}, ${kevColumnSql('f')}
          FROM findings f ${VISIBLE_FINDINGS_SQL} ${FINDING_CASE}
         WHERE ${sql.join(where, sql` AND `)} ORDER BY f.seq DESC LIMIT ${q.limit + 1}`,
  );
  const page = seqPage(rows, q.limit);
  return { data: page.data.map(toFinding), nextCursor: page.nextCursor };
}

export async function getFinding(db: Db, workspaceId: string, id: string): Promise<StoredFinding | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<FindingRow>(
    sql`SELECT ${FINDING_COLUMNS}, ${CASE_COLUMNS}, ${kevColumnSql('f')}
          FROM findings f ${VISIBLE_FINDINGS_SQL} ${FINDING_CASE}
         WHERE f.id = ${id} AND f.workspace_id = ${workspaceId}`,
  );
  return rows[0] ? toFinding(rows[0]) : null;
}
