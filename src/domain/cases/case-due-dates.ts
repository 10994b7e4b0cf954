import type { Db } from '../../db/pool.js';
import { sql, type SqlFragment } from '../../db/sql.js';
import { isUuid } from '../../lib/ids.js';
import type { SlaPolicy } from './sla-policy.js';

/**
 * Due dates and SLA states (docs/cases.md#due-dates-and-sla).
 *
 * - **due date** (`cases.due_at`): the case's first sighting plus its policy days (by priority,
 *   by severity while untriaged; the sooner of those and the tighter days of an exposed asset),
 *   or the earliest CISA KEV due date of its CVEs (end of that UTC day) when sooner. Kept on the
 *   row and recomputed, set-based, whenever what it derives from changes: a scan's sighting
 *   (new case, severity, asset context, reopen), a triage answer (priority), a status change,
 *   the policy. A resolved case is never recomputed: it keeps the due date it was resolved against.
 * - **SLA state**: derived at read time from the due date and the clock: an open or in-progress
 *   case is `on_track`, `due_soon` (the last {@link DUE_SOON_FRACTION} of its window), or
 *   `breached`; a resolved case `met` or `missed` (resolved at or before its due date, or after);
 *   other statuses and cases without a due date have none.
 */

export const SLA_STATES = ['on_track', 'due_soon', 'breached', 'met', 'missed'] as const;
export type SlaState = (typeof SLA_STATES)[number];

/** The last fifth of the window from first sighting to due date is "due soon". */
export const DUE_SOON_FRACTION = 0.2;

/** Cases whose due date a recomputation reads again. */
export type DueDateScope = { caseIds: string[] } | { scanId: string } | { cves: string[] };

/** The effective urgency of `c`: its triage's priority, or its severity while untriaged. */
const EFFECTIVE = sql`(CASE WHEN c.triaged_at IS NULL THEN c.severity ELSE c.priority END)`;

/** The earliest KEV due date of `c`'s CVEs, at the end of that UTC day. */
export const KEV_DUE_SQL = sql`(SELECT (min(k.due_date) + 1)::timestamp AT TIME ZONE 'UTC'
  FROM kev_entries k WHERE k.cve_id = ANY(c.cve_ids))`;

/** The due date of the case aliased `c` under `policy`, as SQL (parameters only). */
export function dueAtSql(policy: SlaPolicy): SqlFragment {
  const base = sql`(${JSON.stringify(policy.days)}::jsonb ->> ${EFFECTIVE})::int`;
  const anyTighter = Object.values(policy.exposedDays).some((d) => d !== null);
  const tighter = anyTighter
    ? sql`CASE WHEN EXISTS (SELECT 1 FROM scans s WHERE s.id = c.last_scan_id
                 AND (s.asset_internet_exposed OR s.asset_criticality IN ('HIGH', 'CRITICAL')))
          THEN (${JSON.stringify(policy.exposedDays)}::jsonb ->> ${EFFECTIVE})::int END`
    : sql`NULL::int`;
  return sql`LEAST(c.first_seen + make_interval(days => LEAST(${base}, ${tighter})), ${KEV_DUE_SQL})`;
}

function scopeWhere(scope: DueDateScope | undefined): SqlFragment | null {
  if (scope === undefined) return sql`true`;
  if ('cves' in scope) {
    return scope.cves.length === 0 ? null : sql`c.cve_ids && ${scope.cves}::text[]`;
  }
  if ('scanId' in scope) {
    if (!isUuid(scope.scanId)) return null;
    return sql`c.fingerprint IN (SELECT f.fingerprint FROM findings f WHERE f.scan_id = ${scope.scanId}::uuid)`;
  }
  const ids = scope.caseIds.filter(isUuid);
  return ids.length === 0 ? null : sql`c.id = ANY(${ids}::uuid[])`;
}

/**
 * Recomputes, in ONE statement, the due dates of the workspace's cases that are not resolved
 * (all of them, or those of `scope`) under `policy`, writing only the rows whose date moved.
 * Returns how many moved.
 */
export async function recomputeDueDates(
  db: Db,
  workspaceId: string,
  policy: SlaPolicy,
  scope?: DueDateScope,
): Promise<number> {
  const where = scopeWhere(scope);
  if (!where) return 0;
  const res = await db.query(sql`
UPDATE cases t SET due_at = n.due_at
FROM (SELECT c.id, ${dueAtSql(policy)} AS due_at FROM cases c
      WHERE c.workspace_id = ${workspaceId} AND c.status <> 'resolved' AND ${where}) n
WHERE t.id = n.id AND t.due_at IS DISTINCT FROM n.due_at`);
  return res.rowCount ?? 0;
}

/** The SLA state of the case aliased `alias` at `now` (SQL; the database's clock when null). */
export function slaStateSql(alias: 'c' | 'fc', now: Date | null | undefined): SqlFragment {
  const c = sql.identifier(alias, ['c', 'fc']);
  const at = now ? sql`${now.toISOString()}::timestamptz` : sql`now()`;
  return sql`(CASE
  WHEN ${c}.due_at IS NULL THEN NULL
  WHEN ${c}.status IN ('open', 'in_progress') THEN CASE
    WHEN ${at} > ${c}.due_at THEN 'breached'
    WHEN ${at} >= ${c}.due_at - (${c}.due_at - ${c}.first_seen) * ${DUE_SOON_FRACTION}::float8 THEN 'due_soon'
    ELSE 'on_track' END
  WHEN ${c}.status = 'resolved' THEN CASE
    WHEN coalesce((SELECT max(h.at) FROM case_status_history h WHERE h.case_id = ${c}.id AND h.to_status = 'resolved'),
                  ${c}.updated_at) <= ${c}.due_at THEN 'met'
    ELSE 'missed' END
  END)`;
}
