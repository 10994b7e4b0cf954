import { sql, type SqlFragment } from '../../db/sql.js';
import { isUuid } from '../../lib/ids.js';
import type { SlaPolicy } from './sla-policy.js';
import { dueAtSql, slaStateSql } from './case-due-dates.js';

/**
 * The list filters (severity, status, priority, action, triaged, stale, CVE, asset, scanner,
 * scan, KEV, EPSS at least, SLA state, due before, assignee, unassigned, tag) as SQL over a table
 * alias. Shared by the
 * findings and cases lists and the exports. A finding has no status or triage of its own: its
 * status and triage are its case's (same workspace and fingerprint).
 */
export interface ListFilters {
  severity?: string[];
  status?: string[];
  /** The current triage's priority (untriaged cases never match). */
  priority?: string[];
  /** The current triage's recommended action. */
  action?: string[];
  triaged?: boolean;
  stale?: boolean;
  cve?: string;
  asset?: string;
  scan?: string;
  kev?: boolean;
  /** The scanner that reported it (`scanner` of a case or finding), exactly. */
  scanner?: string;
  /** The highest EPSS of its CVEs is at least this (no CVE with an EPSS score: no match). */
  epssMin?: number;
  /** The case's SLA state at `now` (docs/cases.md#due-dates-and-sla). */
  sla?: string[];
  /** Due strictly before this instant (ISO 8601); cases without a due date never match. */
  dueBefore?: string;
  /** The clock `sla` is read at; the database's when absent. */
  now?: Date;
  /**
   * The workspace's SLA policy, when the caller has it: `sla` and `dueBefore` then compute due
   * dates from parameters instead of looking the policy up for each case.
   */
  slaPolicy?: SlaPolicy;
  /**
   * Whether cases marked a duplicate of another (docs/cases.md#one-vulnerability-one-case) are
   * selected: hidden unless `include`. Findings are sightings and always listed.
   * @defaultValue 'exclude'
   */
  duplicates?: 'include' | 'exclude';
  /** Owned by this email (any case) (docs/cases.md#owner-and-tags). */
  assignee?: string;
  /** `true`: owned by nobody; `false`: owned by someone. */
  unassigned?: boolean;
  /** Carries this tag. */
  tag?: string;
}

/** The table aliases the filters are written over: `c` for `cases`, `f` for `findings`. */
export type FilterAlias = 'c' | 'f';

/** WHERE conditions of `f` over the `findings` or `cases` row aliased `alias`, to be joined with AND. */
export function filterWhere(alias: FilterAlias, f: ListFilters, table: 'findings' | 'cases'): SqlFragment[] {
  const t = sql.identifier(alias, ['c', 'f']);
  const where: SqlFragment[] = [];
  if (f.severity?.length) where.push(sql`${t}.severity = ANY(${f.severity}::text[])`);
  // Conditions on the case: on the row itself for cases, through one EXISTS for findings.
  const c = table === 'cases' ? t : sql`fc`;
  const onCase: SqlFragment[] = [];
  if (f.status?.length) onCase.push(sql`${c}.status = ANY(${f.status}::text[])`);
  if (f.priority?.length) onCase.push(sql`${c}.priority = ANY(${f.priority}::text[])`);
  if (f.action?.length) onCase.push(sql`${c}.recommended_action = ANY(${f.action}::text[])`);
  if (f.triaged !== undefined) onCase.push(sql`${c}.triaged_at IS ${f.triaged ? sql`NOT ` : sql.empty}NULL`);
  if (f.stale !== undefined) onCase.push(sql`${f.stale ? sql.empty : sql`NOT `}${c}.triage_stale`);
  const caseAlias = table === 'cases' ? 'c' : 'fc';
  if (f.sla?.length) {
    onCase.push(
      sql`${slaStateSql(caseAlias, dueAtSql(caseAlias, f.slaPolicy), f.now)} = ANY(${f.sla}::text[])`,
    );
  }
  if (f.dueBefore !== undefined) {
    // The routes refuse an impossible date; one that reaches here anyway matches nothing.
    const at = instantOf(f.dueBefore);
    onCase.push(
      at === null ? sql`false` : sql`${dueAtSql(caseAlias, f.slaPolicy)} < ${at.toISOString()}::timestamptz`,
    );
  }
  if (table === 'cases' && f.duplicates !== 'include') where.push(sql`${t}.duplicate_of IS NULL`);
  if (f.assignee !== undefined) onCase.push(sql`${c}.assignee = ${f.assignee.trim().toLowerCase()}`);
  if (f.unassigned !== undefined)
    onCase.push(sql`${c}.assignee IS ${f.unassigned ? sql.empty : sql`NOT `}NULL`);
  if (f.tag !== undefined) onCase.push(sql`${c}.tags @> ARRAY[${f.tag}::text]`);
  if (onCase.length && table === 'cases') where.push(...onCase);
  if (onCase.length && table === 'findings') {
    where.push(
      sql`EXISTS (SELECT 1 FROM cases fc WHERE fc.workspace_id = ${t}.workspace_id AND fc.fingerprint = ${t}.fingerprint
                 AND ${sql.join(onCase, sql` AND `)})`,
    );
  }
  if (f.cve) where.push(sql`${t}.cve_ids @> ARRAY[${f.cve.toUpperCase()}::text]`);
  if (f.asset) {
    const a = f.asset;
    where.push(
      sql`(${t}.asset = ${a} OR ${t}.host = ${a} OR ${t}.ip = ${a} OR ${t}.fqdn = ${a} OR ${t}.component = ${a})`,
    );
  }
  if (f.scan !== undefined) {
    // A malformed scan id matches nothing rather than erroring: it is a filter, not a lookup.
    const id = isUuid(f.scan) ? f.scan : '00000000-0000-0000-0000-000000000000';
    where.push(
      table === 'findings'
        ? sql`${t}.scan_id = ${id}::uuid`
        : sql`EXISTS (SELECT 1 FROM findings sf JOIN scans ss ON ss.id = sf.scan_id AND ss.status = 'completed'
                   WHERE sf.workspace_id = ${t}.workspace_id AND sf.fingerprint = ${t}.fingerprint AND sf.scan_id = ${id}::uuid)`,
    );
  }
  if (f.scanner !== undefined) where.push(sql`${t}.scanner = ${f.scanner}`);
  if (f.epssMin !== undefined) {
    where.push(
      sql`(SELECT max(e.epss) FROM epss_scores e WHERE e.cve_id = ANY(${t}.cve_ids)) >= ${f.epssMin}::float8`,
    );
  }
  if (f.kev !== undefined) {
    where.push(
      sql`${f.kev ? sql.empty : sql`NOT `}EXISTS (SELECT 1 FROM kev_entries k WHERE k.cve_id = ANY(${t}.cve_ids))`,
    );
  }
  return where;
}

/**
 * The instant of a `dueBefore` value: a UTC day (its midnight) or an ISO 8601 instant with a time
 * zone; null for anything else, an impossible day (a 30 February) included.
 */
export function instantOf(value: string): Date | null {
  const time = /^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d(\.\d{1,6})?)?(Z|[+-]\d\d:\d\d))?$/.exec(value);
  if (!time) return null;
  const day = value.slice(0, 10);
  const midnight = new Date(`${day}T00:00:00Z`);
  // Date rolls a 30 February over to March: a day must come back as itself.
  if (Number.isNaN(midnight.getTime()) || midnight.toISOString().slice(0, 10) !== day) return null;
  const d = time[1] ? new Date(value) : midnight;
  return Number.isNaN(d.getTime()) ? null : d;
}

/** The `kev` column over the row aliased `alias`: any of its CVEs is in CISA's KEV catalog. */
export const kevColumnSql = (alias: FilterAlias): SqlFragment =>
  sql`EXISTS (SELECT 1 FROM kev_entries k WHERE k.cve_id = ANY(${sql.identifier(alias, ['c', 'f'])}.cve_ids)) AS kev`;

export const splitList = (s: string | undefined): string[] | undefined =>
  s ? s.split(',').filter(Boolean) : undefined;

/** Joined to `findings f`: only findings of completed scans are visible (see `domain/scans/ingest-store.ts`). */
export const VISIBLE_FINDINGS_SQL = sql`JOIN scans s ON s.id = f.scan_id AND s.status = 'completed'`;
