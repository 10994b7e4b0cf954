import type { Db, Pool } from '../../db/pool.js';
import { isUuid } from '../../lib/ids.js';
import { filterSql, type ListFilters } from './list-filters.js';
import { changeCaseStatus, listCases } from './case-queries.js';

/** Statuses in which a case still needs someone's attention (the dashboard's "open"). */
export const OPEN_STATUSES = ['open', 'in_progress'] as const;

/** What the counts above the cases table and the dashboard's tiles say about a set of cases. */
export interface CaseCounts {
  total: number;
  bySeverity: Record<string, number>;
  /** By the current triage's priority; `UNTRIAGED` counts the cases without one. */
  byPriority: Record<string, number>;
}

/**
 * How many cases of a filter have each severity and each triage priority, over the same filter
 * SQL as the list (so the counts and the list can never disagree).
 */
export async function countCases(db: Db, workspaceId: string, filter: ListFilters): Promise<CaseCounts> {
  const params: unknown[] = [workspaceId];
  const where = ['c.workspace_id = $1', ...filterSql('c', filter, params, 'cases')];
  const { rows } = await db.query<{ severity: string; priority: string | null; n: string }>(
    `SELECT c.severity, c.priority, count(*) AS n FROM cases c WHERE ${where.join(' AND ')}
     GROUP BY c.severity, c.priority`,
    params,
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

export interface CaseDashboard {
  /** Open (or in progress) cases by severity and by triage priority. */
  open: CaseCounts;
  /** Open cases with a CVE in CISA's KEV catalog. */
  kevOpen: number;
  /** New cases per UTC day, oldest first, `days` entries ending today (zeros included). */
  newPerDay: { day: string; count: number }[];
}

/** The landing page's figures for one workspace. */
export async function caseDashboard(
  db: Db,
  workspaceId: string,
  now: Date,
  days: number,
): Promise<CaseDashboard> {
  const open = { status: [...OPEN_STATUSES] };
  const [byOpen, kev, perDay] = await Promise.all([
    countCases(db, workspaceId, open),
    countCases(db, workspaceId, { ...open, kev: true }),
    db.query<{ day: string; n: string }>(
      `SELECT to_char(d.day, 'YYYY-MM-DD') AS day, count(c.id) AS n
       FROM generate_series(date_trunc('day', $2::timestamptz AT TIME ZONE 'UTC') - ($3::int - 1) * interval '1 day',
                            date_trunc('day', $2::timestamptz AT TIME ZONE 'UTC'), interval '1 day') AS d(day)
       LEFT JOIN cases c ON c.workspace_id = $1
        AND c.created_at >= d.day AT TIME ZONE 'UTC' AND c.created_at < (d.day + interval '1 day') AT TIME ZONE 'UTC'
       GROUP BY d.day ORDER BY d.day`,
      [workspaceId, now.toISOString(), days],
    ),
  ]);
  return {
    open: byOpen,
    kevOpen: kev.total,
    newPerDay: perDay.rows.map((r) => ({ day: r.day, count: Number(r.n) })),
  };
}

export interface BulkStatusResult {
  /** Cases whose status changed (a history entry each). */
  changed: number;
  /** Cases that already had the status. */
  unchanged: number;
  /** Ids not found in the workspace. */
  notFound: number;
  /** The ids of the cases whose status changed (what a workflow trigger is told). */
  changedIds: string[];
}

/**
 * One status change (with its note and actor) applied to many cases, each through
 * {@link changeCaseStatus}, so each case gets its own history entry exactly as a single PATCH
 * would write it. `filter` selects cases with the list's own query, at most `max` of them.
 */
export async function changeStatusOfCases(
  pool: Pool,
  input: {
    workspaceId: string;
    caseIds?: string[];
    filter?: ListFilters;
    max: number;
    status: string;
    note: string | null;
    actor: string;
  },
): Promise<BulkStatusResult> {
  const ids = input.caseIds ?? (await caseIdsOf(pool, input.workspaceId, input.filter ?? {}, input.max));
  const result: BulkStatusResult = { changed: 0, unchanged: 0, notFound: 0, changedIds: [] };
  for (const caseId of ids) {
    const before = await statusOf(pool, input.workspaceId, caseId);
    const after = await changeCaseStatus(pool, { ...input, caseId });
    if (!after || before === null) result.notFound += 1;
    else if (before === input.status) result.unchanged += 1;
    else {
      result.changed += 1;
      result.changedIds.push(caseId);
    }
  }
  return result;
}

/** Ids of the cases a filter selects (newest first), through the list's own query, up to `max`. */
async function caseIdsOf(db: Db, workspaceId: string, filter: ListFilters, max: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await listCases(db, workspaceId, {
      ...filter,
      limit: Math.min(200, max - ids.length),
      cursor,
    });
    ids.push(...page.data.map((c) => c.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor && ids.length < max);
  return ids;
}

async function statusOf(db: Db, workspaceId: string, caseId: string): Promise<string | null> {
  if (!isUuid(caseId)) return null;
  const { rows } = await db.query<{ status: string }>(
    `SELECT status FROM cases WHERE id = $1 AND workspace_id = $2`,
    [caseId, workspaceId],
  );
  return rows[0]?.status ?? null;
}
