import { sql, type SqlFragment } from '../../db/sql.js';
import { SLA_CLASSES, urgencySql, joinedClassDaysSql } from './case-due-dates.js';

/**
 * The open cases of every workspace whose due date passed by `now` and whose breach is not yet
 * announced (docs/cases.md#due-dates-and-sla), up to `limit` per walk, as `SELECT id`: the breach
 * sweep's candidates (`domain/workflows/sla-breaches.ts`). Due dates are computed at read time, so
 * this walks what they derive from, through partial indexes that announced breaches leave:
 *
 * - per workspace and (urgency, exposure) class, `first_seen` before `now` minus the class's days
 *   under the workspace's policy (`cases_sla_unannounced_class_idx`);
 * - across workspaces, KEV due dates before `now` (`cases_sla_unannounced_kev_idx`).
 *
 * A case's due date is the sooner of its class date and its KEV date, so it is breached exactly
 * when one of the two walks returns it.
 */
export function breachCandidatesSql(now: Date, limit: number): SqlFragment {
  const at = sql`${now.toISOString()}::timestamptz`;
  const open = sql`c.status IN ('open', 'in_progress') AND c.sla_breach_due_at IS NULL`;
  const classes = SLA_CLASSES.map(
    ({ urgency, exposed }) => sql`(SELECT x.id FROM workspaces w
      LEFT JOIN sla_policies sp ON sp.workspace_id = w.id
      CROSS JOIN LATERAL (
        SELECT c.id FROM cases c
         WHERE c.workspace_id = w.id AND ${urgencySql(sql`c`)} = ${urgency}::text AND c.sla_exposed = ${exposed}
           AND ${open} AND c.first_seen < ${at} - make_interval(days => ${joinedClassDaysSql(urgency, exposed)})
         ORDER BY c.first_seen LIMIT ${limit}) x)`,
  );
  const kev = sql`(SELECT c.id FROM cases c WHERE ${open} AND c.kev_due_at IS NOT NULL AND c.kev_due_at < ${at}
     ORDER BY c.kev_due_at LIMIT ${limit})`;
  return sql.join([...classes, kev], sql` UNION `);
}
