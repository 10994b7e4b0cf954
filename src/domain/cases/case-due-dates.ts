import { sql, type SqlFragment } from '../../db/sql.js';
import { DEFAULT_SLA_POLICY, SLA_PRIORITIES, type SlaPolicy, type SlaPriority } from './sla-policy.js';

/**
 * Due dates and SLA states (docs/cases.md#due-dates-and-sla), computed at read time.
 *
 * - **due date**: an open case's first sighting plus the days of its class under its workspace's
 *   policy, or its KEV due date (`cases.kev_due_at`, the earliest CISA KEV due date of its CVEs,
 *   end of that UTC day) when sooner. Its class is its urgency (priority, severity while
 *   untriaged) and its exposure (`cases.sla_exposed`: the asset its newest scan described is
 *   internet-exposed or of HIGH/CRITICAL criticality), whose days are the sooner of the policy's
 *   days and its tighter exposed days. Nothing stores it, so a policy, triage, sighting or KEV
 *   change moves it without a write. A resolved case keeps the due date it was resolved against
 *   (`cases.due_at`, frozen by m034's trigger whichever path resolves it).
 * - **SLA state**: from the due date and the clock: an open or in-progress case is `on_track`,
 *   `due_soon` (the last {@link DUE_SOON_FRACTION} of its window), or `breached`; a resolved case
 *   `met` or `missed` (resolved at or before its due date, or after); other statuses and cases
 *   without a due date have none.
 */

export const SLA_STATES = ['on_track', 'due_soon', 'breached', 'met', 'missed'] as const;
export type SlaState = (typeof SLA_STATES)[number];

/** The last fifth of the window from first sighting to due date is "due soon". */
export const DUE_SOON_FRACTION = 0.2;

/** The classes of open cases: one walk of `cases_due_class_idx` each in the `dueAt` sort. */
export const SLA_CLASSES: readonly { urgency: SlaPriority; exposed: boolean }[] = SLA_PRIORITIES.flatMap(
  (urgency) => [false, true].map((exposed) => ({ urgency, exposed })),
);

/** The days from first sighting to due date of a class under `policy`; null: none. */
export function classDays(policy: SlaPolicy, urgency: SlaPriority, exposed: boolean): number | null {
  const d = policy.days[urgency];
  const e = exposed ? policy.exposedDays[urgency] : null;
  return d === null ? e : e === null ? d : Math.min(d, e);
}

/** The urgency of the `cases` row `a`, the expression m034's class indexes are built on. */
export const urgencySql = (a: SqlFragment): SqlFragment =>
  sql`(CASE WHEN ${a}.triaged_at IS NULL THEN ${a}.severity ELSE ${a}.priority END)`;

/** What an open case's due date derives from, as SQL. */
export interface DueBasis {
  urgency: SqlFragment;
  exposed: SqlFragment;
  firstSeen: SqlFragment;
  kevDueAt: SqlFragment;
}

/** The basis of the `cases` row `a`. */
export const basisOf = (a: SqlFragment): DueBasis => ({
  urgency: urgencySql(a),
  exposed: sql`${a}.sla_exposed`,
  firstSeen: sql`${a}.first_seen`,
  kevDueAt: sql`${a}.kev_due_at`,
});

/** A class's days as SQL. */
type DaysSql = (urgency: SlaPriority, exposed: boolean) => SqlFragment;

/** Days of a policy known here, as parameters. */
const daysOfPolicy =
  (policy: SlaPolicy): DaysSql =>
  (p, exposed) => {
    const d = classDays(policy, p, exposed);
    return d === null ? sql`NULL::int` : sql`${d}::int`;
  };

const POLICY_COLUMNS = SLA_PRIORITIES.flatMap((p) => [
  `${p.toLowerCase()}_days`,
  `exposed_${p.toLowerCase()}_days`,
]);

/** A class's days under the `sla_policies` row joined as `sp` (the defaults when the workspace has none). */
export const joinedClassDaysSql: DaysSql = (p, exposed) => {
  const col = (prefix: string) => {
    const name = `${prefix}${p.toLowerCase()}_days`;
    const fallback = (prefix ? DEFAULT_SLA_POLICY.exposedDays : DEFAULT_SLA_POLICY.days)[p];
    return sql`(CASE WHEN sp.workspace_id IS NULL THEN ${fallback}::int ELSE sp.${sql.identifier(name, POLICY_COLUMNS)} END)`;
  };
  return exposed ? sql`LEAST(${col('')}, ${col('exposed_')})` : col('');
};

function openDue(b: DueBasis, days: DaysSql): SqlFragment {
  const byUrgency = (exposed: boolean) =>
    sql`CASE ${b.urgency} ${sql.join(
      SLA_PRIORITIES.map((p) => sql`WHEN ${p}::text THEN ${days(p, exposed)}`),
      sql` `,
    )} END`;
  return sql`LEAST(${b.firstSeen} + make_interval(days => CASE WHEN ${b.exposed} THEN ${byUrgency(true)} ELSE ${byUrgency(false)} END), ${b.kevDueAt})`;
}

/** The due date of an open case of basis `b` under `policy` (parameters only). */
export const openDueSql = (b: DueBasis, policy: SlaPolicy): SqlFragment => openDue(b, daysOfPolicy(policy));

/**
 * The due date of an open case of basis `b` under the policy of the workspace `workspaceId`
 * names (a correlated lookup of `sla_policies`): where the workspace varies by row.
 */
export const openDueLookupSql = (b: DueBasis, workspaceId: SqlFragment): SqlFragment =>
  sql`(SELECT ${openDue(b, joinedClassDaysSql)} FROM (SELECT) one
        LEFT JOIN sla_policies sp ON sp.workspace_id = ${workspaceId})`;

/** Joined to `cases c` so {@link dueAtJoinedSql} reads the workspace's policy once per row. */
export const POLICY_JOIN_SQL = sql`LEFT JOIN sla_policies sp ON sp.workspace_id = c.workspace_id`;

/** The due date of the `cases` row `c` with `sla_policies sp` joined ({@link POLICY_JOIN_SQL}). */
export const dueAtJoinedSql = (): SqlFragment =>
  sql`(CASE WHEN c.status = 'resolved' THEN c.due_at ELSE ${openDue(basisOf(sql`c`), joinedClassDaysSql)} END)`;

/**
 * The due date of the `cases` row aliased `alias`: its frozen one when resolved, else computed
 * under `policy` when the caller knows it (parameters), or its workspace's (a lookup).
 */
export function dueAtSql(alias: 'c' | 'fc', policy?: SlaPolicy | null): SqlFragment {
  const a = sql.identifier(alias, ['c', 'fc']);
  const open = policy ? openDueSql(basisOf(a), policy) : openDueLookupSql(basisOf(a), sql`${a}.workspace_id`);
  return sql`(CASE WHEN ${a}.status = 'resolved' THEN ${a}.due_at ELSE ${open} END)`;
}

/**
 * A case's breach announcement (`sla_breach_due_at`, here `announced`) once its open due date is
 * `due`: cleared when `due` is later than the date announced, so the new date passing is a new
 * breach; kept when it is the same or earlier (the same breach). `due` is evaluated only for
 * announced cases. The one rule of every change a due date derives from (a sighting, a triage, a
 * KEV load; a policy change and a reopen apply it set-wise and in m034's trigger).
 */
export const announcementAfterSql = (announced: SqlFragment, due: SqlFragment): SqlFragment =>
  sql`(CASE WHEN ${announced} IS NULL THEN NULL WHEN ${due} > ${announced} THEN NULL ELSE ${announced} END)`;

/**
 * The SLA state, as SQL, of the `cases` row aliased `alias` whose due date is `due` (an
 * expression over it, evaluated once), at `now` (the database's clock when null).
 */
export function slaStateSql(alias: 'c' | 'fc', due: SqlFragment, now: Date | null | undefined): SqlFragment {
  const c = sql.identifier(alias, ['c', 'fc']);
  const at = now ? sql`${now.toISOString()}::timestamptz` : sql`now()`;
  return sql`(SELECT CASE
  WHEN x.due IS NULL THEN NULL
  WHEN ${c}.status IN ('open', 'in_progress') THEN CASE
    WHEN ${at} > x.due THEN 'breached'
    WHEN ${at} >= x.due - (x.due - ${c}.first_seen) * ${DUE_SOON_FRACTION}::float8 THEN 'due_soon'
    ELSE 'on_track' END
  WHEN ${c}.status = 'resolved' THEN CASE
    WHEN coalesce((SELECT max(h.at) FROM case_status_history h WHERE h.case_id = ${c}.id AND h.to_status = 'resolved'),
                  ${c}.updated_at) <= x.due THEN 'met'
    ELSE 'missed' END
  END FROM (SELECT ${due} AS due) x)`;
}

/**
 * The earliest KEV due date of the CVEs `cves` (SQL text array), at the end of that UTC day. One
 * index probe per CVE: as a join, the planner reads all of `kev_entries` once per case (0.6 ms a
 * case against 3 µs with 1,600 entries, measured on the bench database).
 */
export const kevDueSql = (cves: SqlFragment): SqlFragment =>
  sql`(SELECT (min((SELECT k.due_date FROM kev_entries k WHERE k.cve_id = u.cve)) + 1)::timestamp AT TIME ZONE 'UTC'
        FROM unnest(${cves}) u(cve))`;
