import type { Db, Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { seqCursor, seqPage, sortedPage, type Page } from '../../lib/cursor.js';
import { isUuid } from '../../lib/ids.js';
import { CASE_EPSS, caseOrder, type CaseSort } from './case-sort.js';
import {
  listCaseTriageHistory,
  type CaseTriageHistoryEntry,
  type TriageColumns,
  viewTriage,
} from './case-triage-store.js';
import { filterSql, kevColumn, type ListFilters, VISIBLE_FINDINGS } from './list-filters.js';

/** A case: one problem on one asset within a workspace (DECISIONS §10), with its current triage (m011: all null when untriaged). */
export interface CaseRow extends TriageColumns {
  id: string;
  seq: string;
  workspace_id: string;
  fingerprint: string;
  title: string;
  severity: string;
  status: string;
  scanner: string;
  rule_id: string | null;
  cve_ids: string[];
  cwe_ids: string[];
  cvss_score: string | null;
  asset: string | null;
  host: string | null;
  ip: string | null;
  fqdn: string | null;
  component: string | null;
  port: number | null;
  protocol: string | null;
  first_scan_id: string;
  last_scan_id: string;
  first_seen: Date;
  last_seen: Date;
  sightings: number;
  kev: boolean;
  /** The highest EPSS of its CVEs, null without one. */
  epss: number | null;
  created_at: Date;
  updated_at: Date;
  triage_stale: boolean;
}

/** What a case read selects: the row, its KEV flag and its EPSS. */
const CASE_COLUMNS = `c.*, ${kevColumn('c')}, ${CASE_EPSS} AS epss`;

/**
 * A page of the workspace's cases matching `q`, in the order `q.sort` names (newest first
 * without one), keyset-paged: the cursor carries the sort key and the sequence (`case-sort.ts`).
 */
export async function listCases(
  db: Db,
  workspaceId: string,
  q: ListFilters & { limit: number; cursor?: string; sort?: CaseSort },
): Promise<Page<CaseRow>> {
  const params: unknown[] = [workspaceId];
  const where = ['c.workspace_id = $1', ...filterSql('c', q, params, 'cases')];
  const order = caseOrder(q.sort, q.cursor, params);
  if (order.after) where.push(order.after);
  params.push(q.limit + 1);
  const { rows } = await db.query<CaseRow & { sort_v: string | number }>(
    `SELECT ${CASE_COLUMNS}, ${order.column} FROM cases c ${order.join} WHERE ${where.join(' AND ')}
     ORDER BY ${order.orderBy} LIMIT $${params.length}`,
    params,
  );
  return q.sort ? sortedPage(rows, q.limit, q.sort) : seqPage(rows, q.limit);
}

export async function getCase(db: Db, workspaceId: string, id: string): Promise<CaseRow | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<CaseRow>(
    `SELECT ${CASE_COLUMNS} FROM cases c WHERE c.id = $1 AND c.workspace_id = $2`,
    [id, workspaceId],
  );
  return rows[0] ?? null;
}

export interface EvidenceRow {
  id: string;
  scan_id: string;
  finding_id: string;
  raw_excerpt: string;
  scanner_output: string | null;
  seen_at: Date;
}

export interface HistoryRow {
  from_status: string | null;
  to_status: string;
  actor: string;
  note: string | null;
  at: Date;
}

/**
 * A case's sightings, newest first, a page at a time: each finding of the case's fingerprint in a
 * completed scan with its evidence, paged on the finding's insertion sequence.
 */
export async function listCaseEvidence(
  db: Db,
  c: Pick<CaseRow, 'workspace_id' | 'fingerprint'>,
  q: { limit: number; cursor?: string },
): Promise<Page<EvidenceRow>> {
  const params: unknown[] = [c.workspace_id, c.fingerprint];
  let after = '';
  if (q.cursor) {
    params.push(seqCursor(q.cursor));
    after = `AND f.seq < $${params.length}::bigint`;
  }
  params.push(q.limit + 1);
  const { rows } = await db.query<EvidenceRow & { seq: string }>(
    `SELECT e.id, e.scan_id, e.finding_id, e.raw_excerpt, e.scanner_output, e.seen_at, f.seq
     FROM findings f ${VISIBLE_FINDINGS}
     JOIN evidence e ON e.finding_id = f.id
     WHERE f.workspace_id = $1 AND f.fingerprint = $2 ${after}
     ORDER BY f.seq DESC LIMIT $${params.length}`,
    params,
  );
  return seqPage(rows, q.limit);
}

export interface CaseDetail {
  evidence: Page<EvidenceRow>;
  history: HistoryRow[];
  triageHistory: Page<CaseTriageHistoryEntry>;
}

/**
 * The first page of a case's sightings (the rest through `listCaseEvidence`), its whole status
 * history, and the first page of its triage history (the rest through `listCaseTriageHistory`).
 */
export async function caseDetail(
  db: Db,
  c: Pick<CaseRow, 'id' | 'workspace_id' | 'fingerprint'>,
  evidenceLimit = 50,
  triageHistoryLimit = 10,
): Promise<CaseDetail> {
  const [evidence, history, triageHistory] = await Promise.all([
    listCaseEvidence(db, c, { limit: evidenceLimit }),
    db.query<HistoryRow>(
      `SELECT from_status, to_status, actor, note, at FROM case_status_history WHERE case_id = $1 ORDER BY id`,
      [c.id],
    ),
    listCaseTriageHistory(db, { workspaceId: c.workspace_id, caseId: c.id }, { limit: triageHistoryLimit }),
  ]);
  return { evidence, history: history.rows, triageHistory };
}

/**
 * A case as `GET /api/v1/cases/:id` shows it: the case with its current triage, its newest
 * sightings, its status history and the newest page of its triage history.
 */
export function viewCaseDetail(c: CaseRow, detail: CaseDetail) {
  return {
    ...viewCase(c),
    evidence: detail.evidence.data.map(viewEvidence),
    evidenceNextCursor: detail.evidence.nextCursor,
    history: detail.history.map(viewHistory),
    triageHistory: detail.triageHistory.data,
    triageHistoryNextCursor: detail.triageHistory.nextCursor,
  };
}

/**
 * Changes a case's status and records who did it, from what, and why. Setting the status it
 * already has changes nothing and writes no history. Null when the case is not in the workspace.
 */
export async function changeCaseStatus(
  pool: Pool,
  input: { workspaceId: string; caseId: string; status: string; note: string | null; actor: string },
): Promise<CaseRow | null> {
  if (!isUuid(input.caseId)) return null;
  const changed = await withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ status: string }>(
      `SELECT status FROM cases WHERE id = $1 AND workspace_id = $2 FOR UPDATE`,
      [input.caseId, input.workspaceId],
    );
    const from = rows[0]?.status;
    if (from === undefined) return false;
    if (from === input.status) return true;
    await tx.query(`UPDATE cases SET status = $2, updated_at = now() WHERE id = $1`, [
      input.caseId,
      input.status,
    ]);
    await tx.query(
      `INSERT INTO case_status_history (case_id, from_status, to_status, actor, note) VALUES ($1, $2, $3, $4, $5)`,
      [input.caseId, from, input.status, input.actor, input.note],
    );
    return true;
  });
  return changed ? getCase(pool, input.workspaceId, input.caseId) : null;
}

export function viewCase(c: CaseRow) {
  return {
    object: 'case' as const,
    id: c.id,
    fingerprint: c.fingerprint,
    title: c.title,
    severity: c.severity,
    status: c.status,
    scanner: c.scanner,
    ruleId: c.rule_id,
    cveIds: c.cve_ids,
    cweIds: c.cwe_ids,
    cvssScore: c.cvss_score === null ? null : Number(c.cvss_score),
    kev: c.kev,
    epss: c.epss,
    asset: { name: c.asset, host: c.host, ip: c.ip, fqdn: c.fqdn, component: c.component },
    port: c.port,
    protocol: c.protocol,
    firstSeen: c.first_seen.toISOString(),
    lastSeen: c.last_seen.toISOString(),
    firstScanId: c.first_scan_id,
    lastScanId: c.last_scan_id,
    sightings: c.sightings,
    triage: viewTriage(c),
    triageStale: c.triage_stale,
    createdAt: c.created_at.toISOString(),
    updatedAt: c.updated_at.toISOString(),
  };
}

export function viewEvidence(e: EvidenceRow) {
  return {
    id: e.id,
    scanId: e.scan_id,
    findingId: e.finding_id,
    rawExcerpt: e.raw_excerpt,
    scannerOutput: e.scanner_output,
    seenAt: e.seen_at.toISOString(),
  };
}

function viewHistory(h: HistoryRow) {
  return { from: h.from_status, to: h.to_status, actor: h.actor, note: h.note, at: h.at.toISOString() };
}
