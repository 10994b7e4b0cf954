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
 *
 * A cursor carries the sort's name and the last row's key (`lib/cursor.ts`); one made under
 * another order is a 400, never a silently wrong page.
 */
export const CASE_SORTS = ['priority', 'lastSeen', 'firstSeen', 'epss'] as const;
export type CaseSort = (typeof CASE_SORTS)[number];

/** EPSS of a case aliased `c`: the highest of its CVEs, -1 without one (so NULLS sort last). */
export const CASE_EPSS = `(SELECT max(e.epss) FROM epss_scores e WHERE e.cve_id = ANY(c.cve_ids))`;

/** Timestamps travel in cursors with microseconds, as PostgreSQL keeps them. */
const ISO_MICROS = (col: string): string =>
  `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const isIsoMicros = (v: unknown): v is string =>
  typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(v) && !Number.isNaN(Date.parse(v));
const isRank = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 5;
const isEpss = (v: unknown): v is number =>
  typeof v === 'number' && Number.isFinite(v) && (v === -1 || (v >= 0 && v <= 1));

/**
 * The EPSS sort key as a lateral join (`ce.epss`): PostgreSQL memoizes it per distinct CVE list
 * (many cases share one), which a correlated subquery in ORDER BY does not get; measured 3× faster
 * at 100,000 cases (bench/cases/case-list.ts).
 */
const EPSS_JOIN = `LEFT JOIN LATERAL (SELECT max(e.epss) AS epss FROM unnest(c.cve_ids) u(cve)
  JOIN epss_scores e ON e.cve_id = u.cve) ce ON true`;

interface SortSpec {
  /** SQL of the key over `c`. */
  key: string;
  /** A join the key needs. */
  join?: string;
  /** SQL of the key as the cursor carries it. */
  value: string;
  /** The cursor value as a typed SQL parameter. */
  cast: string;
  dir: 'ASC' | 'DESC';
  valid: (v: unknown) => v is string | number;
}

const SPECS: Record<CaseSort, SortSpec> = {
  priority: { key: 'c.priority_rank', value: 'c.priority_rank', cast: 'smallint', dir: 'ASC', valid: isRank },
  lastSeen: {
    key: 'c.last_seen',
    value: ISO_MICROS('c.last_seen'),
    cast: 'timestamptz',
    dir: 'DESC',
    valid: isIsoMicros,
  },
  firstSeen: {
    key: 'c.first_seen',
    value: ISO_MICROS('c.first_seen'),
    cast: 'timestamptz',
    dir: 'DESC',
    valid: isIsoMicros,
  },
  epss: {
    key: 'coalesce(ce.epss, -1)',
    join: EPSS_JOIN,
    value: 'coalesce(ce.epss, -1)',
    cast: 'float8',
    dir: 'DESC',
    valid: isEpss,
  },
};

/**
 * The join, ORDER BY, sort key column (`sort_v`) and, after a cursor, the keyset condition of a
 * case list over `cases c`, with the cursor's values appended to `params`. Throws a 400 for a cursor of
 * another order.
 */
export function caseOrder(
  sort: CaseSort | undefined,
  cursor: string | undefined,
  params: unknown[],
): { join: string; orderBy: string; column: string; after: string | null } {
  if (sort === undefined) {
    const plain = { join: '', orderBy: 'c.seq DESC', column: 'c.seq AS sort_v' };
    if (!cursor) return { ...plain, after: null };
    params.push(unsortedCursor(cursor));
    return { ...plain, after: `c.seq < $${params.length}::bigint` };
  }
  const spec = SPECS[sort];
  const join = spec.join ?? '';
  const orderBy = `${spec.key} ${spec.dir}, c.seq DESC`;
  const column = `${spec.value} AS sort_v`;
  if (!cursor) return { join, orderBy, column, after: null };
  const at = sortedCursor(cursor, sort, spec.valid);
  params.push(at.v, at.s);
  const v = `$${params.length - 1}::${spec.cast}`;
  const s = `$${params.length}::bigint`;
  const beyond = spec.dir === 'ASC' ? '>' : '<';
  return {
    join,
    orderBy,
    column,
    after: `(${spec.key} ${beyond} ${v} OR (${spec.key} = ${v} AND c.seq < ${s}))`,
  };
}
