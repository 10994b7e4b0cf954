import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { dueAtSql } from './case-due-dates.js';

/**
 * The dashboard's remediation figures (docs/console.md#dashboard), from the cases' due dates and
 * their status history (`case_status_history`), for one workspace at `now`:
 *
 * - **past due**: open or in-progress cases past their due date;
 * - **mean time to remediate**: by severity, the mean days from first sighting to resolution of
 *   the cases resolved (and still resolved) in the last 30 and 90 days, by their latest resolution;
 * - **SLA compliance**: of those resolved in the last 90 days with a due date, how many were
 *   resolved by it (`met`) and how many after (`missed`);
 * - **resolved by rescans**: resolutions a rescan made because it no longer saw the case (actor
 *   `scan:<id>`, reason `not_seen`, docs/ingestion.md#rescans) in the last 30 and 90 days.
 */

const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] as const;
type BySeverity = Record<(typeof SEVERITIES)[number], number | null>;

export interface RemediationStats {
  pastDue: number;
  /** Mean days to remediate by severity; null where no case of it was resolved in the window. */
  meanDaysToRemediate: { days30: BySeverity; days90: BySeverity };
  /** Resolutions of the last 90 days with a due date; `rate` is met / (met + missed), null without any. */
  slaCompliance: { met: number; missed: number; rate: number | null };
  resolvedByRescans: { days30: number; days90: number };
}

const days = (d: number | null): number | null => (d === null ? null : Math.round(d * 10) / 10);

export async function remediationStats(db: Db, workspaceId: string, now: Date): Promise<RemediationStats> {
  const at = sql`${now.toISOString()}::timestamptz`;
  const [dueRes, resolvedRes, rescanRes] = await Promise.all([
    db.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM cases c WHERE c.workspace_id = ${workspaceId}
            AND c.status IN ('open', 'in_progress') AND ${dueAtSql('c')} < ${at}`,
    ),
    db.query<{ severity: string; d30: number | null; d90: number | null; met: number; missed: number }>(sql`
WITH res AS (
  SELECT DISTINCT ON (h.case_id) h.case_id, h.at FROM cases c JOIN case_status_history h ON h.case_id = c.id
  WHERE c.workspace_id = ${workspaceId} AND c.status = 'resolved' AND h.to_status = 'resolved'
  ORDER BY h.case_id, h.at DESC
)
SELECT c.severity,
  avg(extract(epoch FROM res.at - c.first_seen)) FILTER (WHERE res.at > ${at} - interval '30 days')::float8 / 86400 AS d30,
  avg(extract(epoch FROM res.at - c.first_seen))::float8 / 86400 AS d90,
  count(*) FILTER (WHERE c.due_at IS NOT NULL AND res.at <= c.due_at)::int AS met,
  count(*) FILTER (WHERE c.due_at IS NOT NULL AND res.at > c.due_at)::int AS missed
FROM res JOIN cases c ON c.id = res.case_id
WHERE res.at > ${at} - interval '90 days' AND res.at <= ${at}
GROUP BY c.severity`),
    db.query<{ d30: number; d90: number }>(sql`
SELECT count(*) FILTER (WHERE h.at > ${at} - interval '30 days')::int AS d30, count(*)::int AS d90
FROM cases c JOIN case_status_history h ON h.case_id = c.id
WHERE c.workspace_id = ${workspaceId} AND h.to_status = 'resolved' AND h.actor LIKE 'scan:%'
  AND h.reason = 'not_seen' AND h.at > ${at} - interval '90 days' AND h.at <= ${at}`),
  ]);
  const d30 = Object.fromEntries(SEVERITIES.map((s) => [s, null])) as BySeverity;
  const d90 = { ...d30 };
  let met = 0;
  let missed = 0;
  for (const r of resolvedRes.rows) {
    const s = r.severity as keyof BySeverity;
    d30[s] = days(r.d30);
    d90[s] = days(r.d90);
    met += r.met;
    missed += r.missed;
  }
  return {
    pastDue: dueRes.rows[0]!.n,
    meanDaysToRemediate: { days30: d30, days90: d90 },
    slaCompliance: {
      met,
      missed,
      rate: met + missed === 0 ? null : Math.round((met / (met + missed)) * 1000) / 1000,
    },
    resolvedByRescans: { days30: rescanRes.rows[0]!.d30, days90: rescanRes.rows[0]!.d90 },
  };
}
