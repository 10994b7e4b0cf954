import { sql, type SqlFragment } from '../../db/sql.js';
import { sortedCursor, unsortedCursor } from '../../lib/cursor.js';

/**
 * The orders of the case list (docs/cases.md#lists-and-filters), each a key plus the case's insertion sequence as
 * the tie-break, so keyset paging returns every case exactly once however many share a key.
 *
 * - (none): newest case first (`seq` descending), the order of every list before sorts existed.
 * - `priority`: most urgent current triage first (`priority_rank` 0 CRITICAL … 4 INFO), untriaged
 *   cases last; newest first within a priority.
 * - `lastSeen`, `firstSeen`: most recent sighting / newest case by first sighting first.
 * - `epss`: highest EPSS of the case's CVEs first, cases without a score last.
 * - `dueAt`: soonest due date first, cases without one last (a far sentinel date stands for
 *   none); due dates are computed at read time, so this order is a merge of index walks
 *   (`case-due-sort.ts`).
 *
 * A cursor carries the sort's name and the last row's key (`lib/cursor.ts`); one made under
 * another order is a 400, never a silently wrong page.
 */
export const CASE_SORTS = ['priority', 'lastSeen', 'firstSeen', 'epss', 'dueAt'] as const;
export type CaseSort = (typeof CASE_SORTS)[number];
/** The orders that are one key over `cases` (all but `dueAt`). */
export type IndexedSort = Exclude<CaseSort, 'dueAt'>;

/** Timestamps travel in cursors with microseconds, as PostgreSQL keeps them. */
export const isoMicros = (col: SqlFragment): SqlFragment =>
  sql`to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
export const isIsoMicros = (v: unknown): v is string =>
  typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(v) && !Number.isNaN(Date.parse(v));
const isRank = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 5;
const isEpss = (v: unknown): v is number =>
  typeof v === 'number' && Number.isFinite(v) && (v === -1 || (v >= 0 && v <= 1));

/**
 * The EPSS sort key as a lateral join (`ce.epss`): PostgreSQL memoizes it per distinct CVE list
 * (many cases share one), which a correlated subquery in ORDER BY does not get; measured 3× faster
 * at 100,000 cases (bench/cases/case-list.ts).
 */
const EPSS_JOIN = sql`LEFT JOIN LATERAL (SELECT max(e.epss) AS epss FROM unnest(c.cve_ids) u(cve)
  JOIN epss_scores e ON e.cve_id = u.cve) ce ON true`;

const ASC = sql`ASC`;
const DESC = sql`DESC`;

interface SortSpec {
  /** SQL of the key over `c`. */
  key: SqlFragment;
  /** A join the key needs. */
  join?: SqlFragment;
  /** SQL of the key as the cursor carries it. */
  value: SqlFragment;
  /** The cursor's key as a typed SQL parameter. */
  param: (v: string | number) => SqlFragment;
  dir: typeof ASC | typeof DESC;
  /** The comparison that reads "after" in `dir`. */
  beyond: SqlFragment;
  valid: (v: unknown) => v is string | number;
}

const SPECS: Record<IndexedSort, SortSpec> = {
  priority: {
    key: sql`c.priority_rank`,
    value: sql`c.priority_rank`,
    param: (v) => sql`${v}::smallint`,
    dir: ASC,
    beyond: sql`>`,
    valid: isRank,
  },
  lastSeen: {
    key: sql`c.last_seen`,
    value: isoMicros(sql`c.last_seen`),
    param: (v) => sql`${v}::timestamptz`,
    dir: DESC,
    beyond: sql`<`,
    valid: isIsoMicros,
  },
  firstSeen: {
    key: sql`c.first_seen`,
    value: isoMicros(sql`c.first_seen`),
    param: (v) => sql`${v}::timestamptz`,
    dir: DESC,
    beyond: sql`<`,
    valid: isIsoMicros,
  },
  epss: {
    key: sql`coalesce(ce.epss, -1)`,
    join: EPSS_JOIN,
    value: sql`coalesce(ce.epss, -1)`,
    param: (v) => sql`${v}::float8`,
    dir: DESC,
    beyond: sql`<`,
    valid: isEpss,
  },
};

/** The SQL of one case list order over `cases c`, a page at a time. */
export interface CaseOrder {
  /** A join the sort key needs, or empty. */
  join: SqlFragment;
  /** ORDER BY of the page over `cases c`. */
  orderBy: SqlFragment;
  /** The sort key column, `sort_v`. */
  column: SqlFragment;
  /** After a cursor, the keyset condition; else null. */
  after: SqlFragment | null;
  /** The same order over the page's output, which carries `sort_v` and `seq`. */
  reorderBy: SqlFragment;
}

/**
 * The join, ORDER BY, sort key column (`sort_v`) and, after a cursor, the keyset condition of a
 * case list over `cases c`. Throws a 400 for a cursor of another order.
 */
export function caseOrder(sort: IndexedSort | undefined, cursor: string | undefined): CaseOrder {
  if (sort === undefined) {
    const plain = {
      join: sql.empty,
      orderBy: sql`c.seq DESC`,
      column: sql`c.seq AS sort_v`,
      reorderBy: sql`c.seq DESC`,
    };
    return { ...plain, after: cursor ? sql`c.seq < ${unsortedCursor(cursor)}::bigint` : null };
  }
  const spec = SPECS[sort];
  const order = {
    join: spec.join ?? sql.empty,
    orderBy: sql`${spec.key} ${spec.dir}, c.seq DESC`,
    column: sql`${spec.value} AS sort_v`,
    reorderBy: sql`c.sort_v ${spec.dir}, c.seq DESC`,
  };
  if (!cursor) return { ...order, after: null };
  const at = sortedCursor(cursor, sort, spec.valid);
  const v = spec.param(at.v);
  const s = sql`${at.s}::bigint`;
  return {
    ...order,
    after: sql`(${spec.key} ${spec.beyond} ${v} OR (${spec.key} = ${v} AND c.seq < ${s}))`,
  };
}
