import { sql, type SqlFragment } from '../../db/sql.js';
import type { CaseStatus } from './case-status.js';
import type { CaseTriageAnswer, CaseTriagePriority } from './case-triage-store.js';
import { kevColumnSql } from './list-filters.js';
import { dueAtJoinedSql, POLICY_JOIN_SQL, slaStateSql, type SlaState } from './case-due-dates.js';

/**
 * The one shape of a case (docs/cases.md) and the one way a `cases` row becomes it: the case
 * list, one case, and every export format read {@link Case}, selected by {@link selectCases} and
 * mapped by {@link toCase}. Camel-case plain data with times as ISO 8601 text, so views and
 * serializers are pure functions of it.
 *
 * Glossary:
 * - **newest sighting**: the case's finding in its last scan; it gives the CVSS vector and the
 *   location fields a case row does not keep (component version, package URL, file, line).
 */

export type { CaseStatus, SlaState };
/** A scanner's severity takes the same five values as a triage's priority. */
export type CaseSeverity = CaseTriagePriority;

/** A case's current triage (m011): the answer it holds (docs/triage.md#request-and-answer field names). */
export type CaseTriage = Omit<CaseTriageAnswer, 'triagedAt'> & { triagedAt: string };

/** A case: one problem on one asset within a workspace, with its current triage and enrichment. */
export interface Case {
  id: string;
  fingerprint: string;
  title: string;
  severity: CaseSeverity;
  status: CaseStatus;
  scanner: string;
  ruleId: string | null;
  cveIds: string[];
  /** Its other identifiers (GHSA, OSV, a vendor's), as the scanner gave them. */
  aliases: string[];
  cweIds: string[];
  cvssScore: number | null;
  /** The newest sighting's. */
  cvssVector: string | null;
  asset: string | null;
  host: string | null;
  ip: string | null;
  fqdn: string | null;
  component: string | null;
  /** The newest sighting's, as are `purl`, `file` and `line`. */
  componentVersion: string | null;
  purl: string | null;
  file: string | null;
  line: number | null;
  port: number | null;
  protocol: string | null;
  /** Any of its CVEs is in CISA's KEV catalog. */
  kev: boolean;
  /** The highest EPSS of its CVEs, null without one. */
  epss: number | null;
  firstSeen: string;
  lastSeen: string;
  firstScanId: string;
  lastScanId: string;
  sightings: number;
  createdAt: string;
  updatedAt: string;
  /** Null when untriaged. */
  triage: CaseTriage | null;
  /** Its enrichment changed since it was triaged. */
  triageStale: boolean;
  /** When it is due (docs/cases.md#due-dates-and-sla); null without a due date. */
  dueAt: string | null;
  /** Its SLA state at the time of the read; null without a due date, or when neither open nor resolved. */
  sla: SlaState | null;
  /** The original case of the same vulnerability on the same asset, when this one is its duplicate. */
  duplicateOf: string | null;
  /**
   * The most important of its CVEs (docs/cases.md#lists-and-filters): one in CISA's KEV catalog
   * first, then the highest EPSS, then the scanner's order; null without CVEs. Read by the case
   * list only (undefined elsewhere).
   */
  leadCveId?: string | null;
  /** Who owns it (an email), null when nobody does (docs/cases.md#owner-and-tags). */
  assignee: string | null;
  /** Short slugs, at most 20. */
  tags: string[];
  /** Its risk acceptance: set exactly while it is `risk_accepted` (docs/cases.md#risk-acceptance). */
  acceptance: CaseAcceptance | null;
}

/** When a risk acceptance ends (the case then reopens) and why it was accepted. */
export interface CaseAcceptance {
  expiresAt: string;
  note: string | null;
}

/** The location columns a case row and a finding row share (a finding adds `os`). */
export interface LocationColumnsRow {
  asset: string | null;
  host: string | null;
  ip: string | null;
  fqdn: string | null;
  component: string | null;
  component_version: string | null;
  purl: string | null;
  file: string | null;
  line: number | null;
}

/**
 * The current-triage columns of `cases` (m011) as {@link triageColumns} selects them: for the row
 * mappers of the cases area (`toCase`, `finding-store.ts`) only, never past them.
 */
export interface TriageColumnsRow {
  priority: CaseTriage['priority'] | null;
  recommended_action: CaseTriage['recommendedAction'] | null;
  reasoning: string | null;
  confidence_score: number | null;
  severity_override: CaseTriage['severityOverride'];
  model: string | null;
  triaged_at: string | null;
  policy_version: string | null;
}

/** The fields of a case whose column has the same name. */
type SameNamed =
  | 'id'
  | 'fingerprint'
  | 'title'
  | 'severity'
  | 'status'
  | 'scanner'
  | 'port'
  | 'protocol'
  | 'kev'
  | 'epss'
  | 'sightings';

/** A row of {@link selectCases}. `seq` (bigint as text) is the keyset of the pages, not part of a case. */
export interface CaseRow extends Pick<Case, SameNamed>, TriageColumnsRow, LocationColumnsRow {
  seq: string;
  rule_id: string | null;
  cve_ids: string[];
  aliases: string[];
  cwe_ids: string[];
  cvss_score: number | null;
  cvss_vector: string | null;
  duplicate_of: string | null;
  first_seen: string;
  last_seen: string;
  first_scan_id: string;
  last_scan_id: string;
  created_at: string;
  updated_at: string;
  triage_stale: boolean;
  due_at: string | null;
  sla: SlaState | null;
  assignee: string | null;
  tags: string[];
  acceptance_expires_at: string | null;
  acceptance_note: string | null;
}

/**
 * A timestamptz as the ISO 8601 text `Date.toISOString()` writes (UTC, milliseconds truncated as
 * node-postgres truncates them).
 */
export const isoText = (col: SqlFragment): SqlFragment =>
  sql`to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The current-triage columns of the `cases` row aliased `alias`, as {@link TriageColumnsRow}. */
export function triageColumns(alias: 'c' | 'fcase'): SqlFragment {
  const a = sql.identifier(alias, ['c', 'fcase']);
  return sql`${a}.priority, ${a}.recommended_action, ${a}.reasoning, ${a}.confidence_score, ${a}.severity_override,
  ${a}.model, ${isoText(sql`${a}.triaged_at`)} AS triaged_at, ${a}.policy_version`;
}

// Arrays as JSON, times as ISO text and scores as float8: pg's JSON.parse and plain strings cost
// a fraction of its text-array and Date parsers (measured in bench/exports).
const caseColumns = (
  now: Date | null,
) => sql`c.seq, c.id, c.fingerprint, c.title, c.severity, c.status, c.scanner, c.rule_id,
  array_to_json(c.cve_ids) AS cve_ids, array_to_json(c.aliases) AS aliases, array_to_json(c.cwe_ids) AS cwe_ids,
  c.cvss_score::float8 AS cvss_score,
  c.asset, c.host, c.ip, c.fqdn, c.component, c.port, c.protocol,
  ${isoText(sql`c.first_seen`)} AS first_seen, ${isoText(sql`c.last_seen`)} AS last_seen,
  c.first_scan_id, c.last_scan_id, c.sightings, ${isoText(sql`c.created_at`)} AS created_at,
  ${isoText(sql`c.updated_at`)} AS updated_at, ${triageColumns('c')}, c.triage_stale, c.duplicate_of,
  ${kevColumnSql('c')}, ${isoText(sql`cd.due`)} AS due_at, ${slaStateSql('c', sql`cd.due`, now)} AS sla,
  (SELECT max(e.epss) FROM epss_scores e WHERE e.cve_id = ANY(c.cve_ids)) AS epss,
  lf.cvss_vector, lf.component_version, lf.purl, lf.file, lf.line,
  c.assignee, array_to_json(c.tags) AS tags, ${isoText(sql`c.acceptance_expires_at`)} AS acceptance_expires_at,
  c.acceptance_note`;

/** The due date of each case of the page (`cd.due`), under its workspace's policy. */
const DUE_JOIN = sql`${POLICY_JOIN_SQL} CROSS JOIN LATERAL (SELECT ${dueAtJoinedSql()} AS due) cd`;

const NEWEST_SIGHTING = sql`LEFT JOIN LATERAL (
  SELECT f.cvss_vector, f.component_version, f.purl, f.file, f.line FROM findings f
   WHERE f.workspace_id = c.workspace_id AND f.fingerprint = c.fingerprint AND f.scan_id = c.last_scan_id
   LIMIT 1) lf ON true`;

/**
 * The one statement that reads cases: `page` selects `cases` rows (`SELECT c.* … FROM cases c
 * … LIMIT n`, plus any columns of its own, which the answer keeps), and this adds each one's
 * enrichment and newest sighting in `orderBy` over its output `c`. The page is chosen first so
 * the per-case lookups run for the rows returned only, whatever order the page sorts by. `now`
 * is the clock the SLA state is read at (the database's when null).
 */
export function selectCases(
  page: SqlFragment,
  orderBy: SqlFragment,
  extra: SqlFragment = sql.empty,
  now: Date | null = null,
): SqlFragment {
  return sql`SELECT ${caseColumns(now)}${extra} FROM (${page}) c ${NEWEST_SIGHTING} ${DUE_JOIN} ORDER BY ${orderBy}`;
}

/** The `lead_cve_id` column over the `cases` row aliased `c` (see {@link Case.leadCveId}). */
export const LEAD_CVE_SQL = sql`(SELECT x.id FROM unnest(c.cve_ids) WITH ORDINALITY AS x(id, n)
    ORDER BY EXISTS (SELECT 1 FROM kev_entries k WHERE k.cve_id = x.id) DESC,
             (SELECT e.epss FROM epss_scores e WHERE e.cve_id = x.id) DESC NULLS LAST, x.n
    LIMIT 1) AS lead_cve_id`;

/** A row's current triage, or null when the case is untriaged. */
export function toCaseTriage(r: TriageColumnsRow): CaseTriage | null {
  if (r.triaged_at === null) return null;
  // m011's CHECK keeps these set whenever triaged_at is.
  return {
    priority: r.priority!,
    recommendedAction: r.recommended_action!,
    reasoning: r.reasoning!,
    confidenceScore: r.confidence_score!,
    severityOverride: r.severity_override,
    model: r.model!,
    triagedAt: r.triaged_at,
    policyVersion: r.policy_version!,
  };
}

export function toCase(r: CaseRow): Case {
  return {
    id: r.id,
    fingerprint: r.fingerprint,
    title: r.title,
    severity: r.severity,
    status: r.status,
    scanner: r.scanner,
    ruleId: r.rule_id,
    cveIds: r.cve_ids,
    aliases: r.aliases,
    cweIds: r.cwe_ids,
    cvssScore: r.cvss_score,
    cvssVector: r.cvss_vector,
    asset: r.asset,
    host: r.host,
    ip: r.ip,
    fqdn: r.fqdn,
    component: r.component,
    componentVersion: r.component_version,
    purl: r.purl,
    file: r.file,
    line: r.line,
    port: r.port,
    protocol: r.protocol,
    kev: r.kev,
    epss: r.epss,
    firstSeen: r.first_seen,
    lastSeen: r.last_seen,
    firstScanId: r.first_scan_id,
    lastScanId: r.last_scan_id,
    sightings: r.sightings,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    triage: toCaseTriage(r),
    triageStale: r.triage_stale,
    dueAt: r.due_at,
    sla: r.sla,
    duplicateOf: r.duplicate_of,
    assignee: r.assignee,
    tags: r.tags,
    acceptance:
      r.acceptance_expires_at === null
        ? null
        : { expiresAt: r.acceptance_expires_at, note: r.acceptance_note },
  };
}
