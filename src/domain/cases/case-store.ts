import type { Db, Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { seqCursor, seqPage, sortedPage, type Page } from '../../lib/cursor.js';
import { isUuid } from '../../lib/ids.js';
import { sql, type SqlFragment } from '../../db/sql.js';
import { LEAD_CVE_SQL, selectCases, toCase, type Case, type CaseRow } from './case.js';
import { caseOrder, type CaseSort } from './case-sort.js';
import { listCaseTriageHistory, type CaseTriageHistoryEntry } from './case-triage-store.js';
import { getSlaPolicy } from './sla-policy-store.js';
import { dueAtPageSql } from './case-due-sort.js';
import { remediationStats, type RemediationStats } from './remediation-stats.js';
import { filterWhere, type ListFilters, VISIBLE_FINDINGS_SQL } from './list-filters.js';

/**
 * The way to the `cases` table and `case_status_history` (docs/cases.md#statuses): the case list, one
 * case, its sightings (findings of completed scans and their evidence), status changes, and the
 * counts of the Cases page and the dashboard. A case is read and mapped by `case.ts`, the one
 * statement and mapping every case read shares (the exports' too). Elsewhere: a case's triage
 * (its triage columns and `case_triage_history`) in `case-triage-store.ts`; cases are created and
 * reopened by a scan's completion (`upsertScanCases` of `case-upsert.ts`, called by the scans
 * area's ingest).
 */

/** One sighting of a case: a finding's evidence; its id is the finding's (m020). */
export interface Evidence {
  id: string;
  scanId: string;
  findingId: string;
  rawExcerpt: string;
  scannerOutput: string | null;
  seenAt: Date;
}

/** One entry of a case's status history. */
export interface StatusChange {
  from: string | null;
  to: string;
  actor: string;
  /** Why the service itself made the change (`acceptance_expired`); null for a person's or tracker's. */
  reason: string | null;
  note: string | null;
  at: Date;
}

/** One status change as {@link changeStatusIn} applies it. */
export interface StatusChangeInput {
  workspaceId: string;
  caseId: string;
  status: string;
  note: string | null;
  actor: string;
  reason?: string | null;
  /**
   * When a risk acceptance expires: required with `risk_accepted` (docs/cases.md#risk-acceptance;
   * the caller has checked it against the policy), ignored otherwise.
   */
  expiresAt?: Date | null;
}

export interface CaseDetail {
  evidence: Page<Evidence>;
  history: StatusChange[];
  triageHistory: Page<CaseTriageHistoryEntry>;
}

/** What the counts above the cases table and the dashboard's tiles say about a set of cases. */
export interface CaseCounts {
  total: number;
  bySeverity: Record<string, number>;
  /** By the current triage's priority; `UNTRIAGED` counts the cases without one. */
  byPriority: Record<string, number>;
}

export interface CaseDashboard {
  /** Open (or in progress) cases by severity and by triage priority. */
  open: CaseCounts;
  /** Open cases with a CVE in CISA's KEV catalog. */
  kevOpen: number;
  /** New cases per UTC day, oldest first, `days` entries ending today (zeros included). */
  newPerDay: { day: string; count: number }[];
  /** Past due, time to remediate, SLA compliance and rescans' resolutions (`remediation-stats.ts`). */
  remediation: RemediationStats;
}

/** Statuses in which a case still needs someone's attention (the dashboard's "open"). */
export const OPEN_STATUSES = ['open', 'in_progress'] as const;

/**
 * A page of the workspace's cases matching `q`, in the order `q.sort` names (newest first
 * without one), keyset-paged: the cursor carries the sort key and the sequence (`case-sort.ts`).
 */
export async function listCases(
  db: Db,
  workspaceId: string,
  q: ListFilters & { limit: number; cursor?: string; sort?: CaseSort },
): Promise<Page<Case>> {
  let select: SqlFragment;
  let reorderBy: SqlFragment;
  if (q.sort === 'dueAt') {
    // The policy's days as parameters: the merge walks one index per class of days.
    const policy = q.slaPolicy ?? (await getSlaPolicy(db, workspaceId));
    const where = [
      sql`c.workspace_id = ${workspaceId}`,
      ...filterWhere('c', { ...q, slaPolicy: policy }, 'cases'),
    ];
    select = dueAtPageSql(where, policy, { cursor: q.cursor, limit: q.limit + 1, statuses: q.status });
    reorderBy = sql`c.sort_v ASC, c.seq DESC`;
  } else {
    const where = [sql`c.workspace_id = ${workspaceId}`, ...filterWhere('c', q, 'cases')];
    const order = caseOrder(q.sort, q.cursor);
    if (order.after) where.push(order.after);
    select = sql`SELECT c.*, ${order.column} FROM cases c ${order.join} WHERE ${sql.join(where, sql` AND `)}
           ORDER BY ${order.orderBy} LIMIT ${q.limit + 1}`;
    reorderBy = order.reorderBy;
  }
  const { rows } = await db.query<CaseRow & { sort_v: string | number; lead_cve_id: string | null }>(
    selectCases(select, reorderBy, sql`, c.sort_v, ${LEAD_CVE_SQL}`, q.now ?? null),
  );
  const page = q.sort ? sortedPage(rows, q.limit, q.sort) : seqPage(rows, q.limit);
  return {
    data: page.data.map((r) => ({ ...toCase(r), leadCveId: r.lead_cve_id })),
    nextCursor: page.nextCursor,
  };
}

/** One case of the workspace, its SLA state read at `now` (the database's clock when null). */
export async function getCase(
  db: Db,
  workspaceId: string,
  id: string,
  now: Date | null = null,
): Promise<Case | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<CaseRow>(
    selectCases(
      sql`SELECT c.* FROM cases c WHERE c.id = ${id} AND c.workspace_id = ${workspaceId}`,
      sql`c.seq`,
      sql.empty,
      now,
    ),
  );
  return rows[0] ? toCase(rows[0]) : null;
}

/**
 * A case's sightings, newest first, a page at a time: each finding of the case's fingerprint in a
 * completed scan with its evidence, paged on the finding's insertion sequence.
 */
export async function listCaseEvidence(
  db: Db,
  c: { workspaceId: string; fingerprint: string },
  q: { limit: number; cursor?: string },
): Promise<Page<Evidence>> {
  const after = q.cursor ? sql`AND f.seq < ${seqCursor(q.cursor)}::bigint` : sql.empty;
  const { rows } = await db.query<Evidence & { seq: string }>(
    sql`SELECT f.id, f.scan_id AS "scanId", f.id AS "findingId", f.raw_excerpt AS "rawExcerpt",
            f.scanner_output AS "scannerOutput", f.created_at AS "seenAt", f.seq
     FROM findings f ${VISIBLE_FINDINGS_SQL}
     WHERE f.workspace_id = ${c.workspaceId} AND f.fingerprint = ${c.fingerprint} ${after}
     ORDER BY f.seq DESC LIMIT ${q.limit + 1}`,
  );
  const page = seqPage(rows, q.limit);
  return { data: page.data.map(({ seq: _seq, ...e }) => e), nextCursor: page.nextCursor };
}

/**
 * The first page of a case's sightings (the rest through `listCaseEvidence`), its whole status
 * history, and the first page of its triage history (the rest through `listCaseTriageHistory`).
 */
export async function caseDetail(
  db: Db,
  workspaceId: string,
  c: Pick<Case, 'id' | 'fingerprint'>,
  evidenceLimit = 50,
  triageHistoryLimit = 10,
): Promise<CaseDetail> {
  const [evidence, history, triageHistory] = await Promise.all([
    listCaseEvidence(db, { workspaceId, fingerprint: c.fingerprint }, { limit: evidenceLimit }),
    db.query<StatusChange>(
      sql`SELECT from_status AS "from", to_status AS "to", actor, reason, note, at FROM case_status_history
           WHERE case_id = ${c.id} ORDER BY id`,
    ),
    listCaseTriageHistory(db, { workspaceId, caseId: c.id }, { limit: triageHistoryLimit }),
  ]);
  return { evidence, history: history.rows, triageHistory };
}

/**
 * Changes a case's status and records who did it, from what, and why, on `tx` (a transaction
 * client: the case row stays locked until it commits). Setting the status it already has changes
 * nothing and writes no history, except that accepting an accepted risk again with another
 * expiry moves the expiry (and takes the new note) and records it. Entering `risk_accepted` sets the acceptance's expiry;
 * leaving it clears it, so the expiry is set exactly while the case is accepted.
 */
export async function changeStatusIn(
  tx: Db,
  input: StatusChangeInput,
): Promise<'changed' | 'unchanged' | 'missing'> {
  if (!isUuid(input.caseId)) return 'missing';
  const { rows } = await tx.query<{ status: string; expires: Date | null }>(
    sql`SELECT status, acceptance_expires_at AS expires FROM cases
         WHERE id = ${input.caseId} AND workspace_id = ${input.workspaceId} FOR UPDATE`,
  );
  const row = rows[0];
  if (!row) return 'missing';
  const accepted = input.status === 'risk_accepted';
  if (accepted && !input.expiresAt) throw new Error('risk_accepted needs its expiry');
  const expires = accepted ? input.expiresAt! : null;
  if (row.status === input.status && (!accepted || row.expires?.getTime() === expires?.getTime())) {
    return 'unchanged';
  }
  await tx.query(
    sql`UPDATE cases SET status = ${input.status}, acceptance_expires_at = ${expires},
              acceptance_note = ${accepted ? input.note : null}, updated_at = now()
         WHERE id = ${input.caseId}`,
  );
  await tx.query(
    sql`INSERT INTO case_status_history (case_id, from_status, to_status, actor, reason, note)
        VALUES (${input.caseId}, ${row.status}, ${input.status}, ${input.actor}, ${input.reason ?? null}, ${input.note})`,
  );
  return 'changed';
}

/** {@link changeStatusIn} in its own transaction, answering the case; null when the workspace has none of that id. */
export async function changeCaseStatus(
  pool: Pool,
  input: StatusChangeInput,
  now: Date | null = null,
): Promise<Case | null> {
  const outcome = await withTransaction(pool, (tx) => changeStatusIn(tx, input));
  return outcome === 'missing' ? null : getCase(pool, input.workspaceId, input.caseId, now);
}

/**
 * How many cases of a filter have each severity and each triage priority, over the same filter
 * SQL as the list (so the counts and the list can never disagree).
 */
export async function countCases(db: Db, workspaceId: string, filter: ListFilters): Promise<CaseCounts> {
  const where = [sql`c.workspace_id = ${workspaceId}`, ...filterWhere('c', filter, 'cases')];
  const { rows } = await db.query<{ severity: string; priority: string | null; n: string }>(
    sql`SELECT c.severity, c.priority, count(*) AS n FROM cases c WHERE ${sql.join(where, sql` AND `)}
        GROUP BY c.severity, c.priority`,
  );
  const bySeverity: Record<string, number> = { CRITICAL: 0, HIGH: 0, MEDIUM: 0, LOW: 0, INFO: 0 };
  const byPriority: Record<string, number> = {
    CRITICAL: 0,
    HIGH: 0,
    MEDIUM: 0,
    LOW: 0,
    INFO: 0,
    UNTRIAGED: 0,
  };
  let total = 0;
  for (const r of rows) {
    const n = Number(r.n);
    bySeverity[r.severity] = (bySeverity[r.severity] ?? 0) + n;
    const p = r.priority ?? 'UNTRIAGED';
    byPriority[p] = (byPriority[p] ?? 0) + n;
    total += n;
  }
  return { total, bySeverity, byPriority };
}

/** The landing page's figures for one workspace. */
export async function caseDashboard(
  db: Db,
  workspaceId: string,
  now: Date,
  days: number,
): Promise<CaseDashboard> {
  const open = { status: [...OPEN_STATUSES] };
  const today = sql`date_trunc('day', ${now.toISOString()}::timestamptz AT TIME ZONE 'UTC')`;
  const [byOpen, kev, perDay, remediation] = await Promise.all([
    countCases(db, workspaceId, open),
    countCases(db, workspaceId, { ...open, kev: true }),
    db.query<{ day: string; n: string }>(
      sql`SELECT to_char(d.day, 'YYYY-MM-DD') AS day, count(c.id) AS n
       FROM generate_series(${today} - (${days}::int - 1) * interval '1 day', ${today}, interval '1 day') AS d(day)
       LEFT JOIN cases c ON c.workspace_id = ${workspaceId} AND c.duplicate_of IS NULL
        AND c.created_at >= d.day AT TIME ZONE 'UTC' AND c.created_at < (d.day + interval '1 day') AT TIME ZONE 'UTC'
       GROUP BY d.day ORDER BY d.day`,
    ),
    remediationStats(db, workspaceId, now),
  ]);
  return {
    open: byOpen,
    kevOpen: kev.total,
    newPerDay: perDay.rows.map((r) => ({ day: r.day, count: Number(r.n) })),
    remediation,
  };
}
