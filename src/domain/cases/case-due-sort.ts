import { sql, type SqlFragment } from '../../db/sql.js';
import { sortedCursor } from '../../lib/cursor.js';
import { basisOf, classDays, dueAtSql, openDueSql, SLA_CLASSES, urgencySql } from './case-due-dates.js';
import { isIsoMicros, isoMicros } from './case-sort.js';
import type { SlaPolicy } from './sla-policy.js';

/**
 * The `dueAt` order of the case list (docs/cases.md#lists-and-filters): soonest due date first,
 * cases without one last, newest first within a due date. Due dates are computed at read time
 * (`case-due-dates.ts`), so no index holds this order; it is a merge of walks that each do:
 *
 * - one per (urgency, exposure) class with days (`cases_due_class_idx`): within a class an open
 *   case's due date is `first_seen` plus the class's days unless its KEV due date is sooner, so
 *   `first_seen` order is the class's due-date order and no case's due date is later than its
 *   class date;
 * - the KEV due dates of open cases (`cases_due_kev_idx`): a case whose KEV date is the sooner
 *   is in this stream no later than in its class's;
 * - the resolved cases' frozen due dates (`cases_due_resolved_idx`);
 * - cases without a due date, newest first, read only when the dated walks leave the page short.
 *
 * Each walk reads at most a page past the cursor, each row is ranked by its exact due date, and the
 * page is the first `limit` of their union. After a cursor `(k, s)` a class walk starts at
 * `first_seen >= k - days` (no case before it can be due after `k`), the KEV and resolved walks at `k`.
 */

/** Stands for "no due date" in the key and the cursor: after every date. */
const NONE = sql`'9999-12-31T00:00:00Z'::timestamptz`;

/**
 * The page query over `cases c` (every column, plus `sort_v`) of the workspace's cases matching
 * `where` (conditions over `c`, the workspace's included) in `dueAt` order, `limit` rows.
 * `statuses`: the status filter, so walks that cannot match are not read. Throws a 400 for a
 * cursor of another order.
 */
export function dueAtPageSql(
  where: SqlFragment[],
  policy: SlaPolicy,
  q: { cursor?: string; limit: number; statuses?: readonly string[] },
): SqlFragment {
  const after = q.cursor ? sortedCursor(q.cursor, 'dueAt', isIsoMicros) : null;
  const k = after ? sql`${after.v}::timestamptz` : null;
  const s = after ? sql`${after.s}::bigint` : null;
  const key = dueAtSql('c', policy);
  // Written without OR, which the planner would turn into a bitmap scan and a sort of every row
  // after the cursor instead of the walk.
  const beyond = (col: SqlFragment) =>
    k && s ? [sql`${col} >= ${k}`, sql`NOT (${col} = ${k} AND c.seq >= ${s})`] : [];
  const filters = sql.join(where, sql` AND `);
  const wantsOpen = !q.statuses?.length || q.statuses.some((x) => x !== 'resolved');
  const wantsResolved = !q.statuses?.length || q.statuses.includes('resolved');
  const walk = (conds: SqlFragment[], order: SqlFragment, k: SqlFragment) =>
    sql`(SELECT c.id, c.seq, ${k} AS k FROM cases c WHERE ${sql.join([filters, ...conds], sql` AND `)}
          ORDER BY ${order} LIMIT ${q.limit})`;
  const walks: SqlFragment[] = [];
  if (wantsOpen) {
    const open = openDueSql(basisOf(sql`c`), policy);
    for (const { urgency, exposed } of SLA_CLASSES) {
      const days = classDays(policy, urgency, exposed);
      if (days === null) continue;
      const from = k ? [sql`c.first_seen >= ${k} - make_interval(days => ${days}::int)`] : [];
      // Within the class, the due date without the whole policy.
      const due = sql`LEAST(c.first_seen + make_interval(days => ${days}::int), c.kev_due_at)`;
      walks.push(
        walk(
          [
            sql`c.status <> 'resolved'`,
            sql`${urgencySql(sql`c`)} = ${urgency}::text`,
            sql`c.sla_exposed = ${exposed}`,
            ...from,
            ...beyond(due),
          ],
          sql`c.first_seen, c.seq DESC`,
          due,
        ),
      );
    }
    walks.push(
      walk(
        [
          sql`c.status <> 'resolved'`,
          sql`c.kev_due_at IS NOT NULL`,
          ...(k ? [sql`c.kev_due_at >= ${k}`] : []),
          ...beyond(open),
        ],
        sql`c.kev_due_at, c.seq DESC`,
        open,
      ),
    );
  }
  if (wantsResolved) {
    walks.push(
      walk(
        [sql`c.status = 'resolved'`, sql`c.due_at IS NOT NULL`, ...beyond(sql`c.due_at`)],
        sql`c.due_at, c.seq DESC`,
        sql`c.due_at`,
      ),
    );
  }
  // Cases without a due date come after every dated one: read only when the page is short.
  const undated = [filters, sql`${key} IS NULL`];
  if (after && after.v === '9999-12-31T00:00:00.000000Z') undated.push(sql`c.seq < ${s}`);
  const dated = walks.length
    ? sql`SELECT id, seq, k FROM (${sql.join(walks, sql` UNION `)}) w ORDER BY k, seq DESC LIMIT ${q.limit}`
    : sql`SELECT NULL::uuid AS id, NULL::bigint AS seq, NULL::timestamptz AS k WHERE false`;
  return sql`WITH dated AS (${dated}),
  undated AS (
    SELECT c.id, c.seq, NULL::timestamptz AS k FROM cases c
     WHERE (SELECT count(*) FROM dated) < ${q.limit} AND ${sql.join(undated, sql` AND `)}
     ORDER BY c.seq DESC LIMIT ${q.limit})
SELECT c.*, ${isoMicros(sql`coalesce(m.k, ${NONE})`)} AS sort_v
  FROM (SELECT * FROM dated UNION ALL SELECT * FROM undated) m JOIN cases c ON c.id = m.id
 ORDER BY coalesce(m.k, ${NONE}), c.seq DESC LIMIT ${q.limit}`;
}
