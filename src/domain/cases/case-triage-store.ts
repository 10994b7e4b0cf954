import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { seqCursor, seqPage, type Page } from '../../lib/cursor.js';
import { isUuid } from '../../lib/ids.js';
import { announcementAfterSql, basisOf, openDueLookupSql } from './case-due-dates.js';

/**
 * A case's triage (docs/cases.md#triage-on-a-case): the current answer on `cases`, every answer appended to
 * `case_triage_history`, and `triage_stale` when the case's enrichment changed since.
 *
 * Glossary:
 * - **answer**: a triage response (docs/triage.md#request-and-answer fields) plus the safety policy version it passed.
 * - **snapshot**: the case's enrichment when it was triaged — KEV membership of any of its CVEs,
 *   their highest EPSS and highest NVD CVSS base score — stored with the answer.
 * - **stale**: today's enrichment differs from the snapshot: KEV membership changed, EPSS moved
 *   by 0.1 or more, or the CVSS base score changed. Only a new answer clears it; nothing here
 *   ever triages (that spends the customer's AI calls).
 *
 * The literal types are this module's own: `domain/cases` imports no other area, so the
 * enrichment loaders (which call {@link markStaleForCves}) can import it without a cycle.
 */
export type CaseTriagePriority = 'CRITICAL' | 'HIGH' | 'MEDIUM' | 'LOW' | 'INFO';
export type CaseTriageAction =
  'PATCH_IMMEDIATELY' | 'PATCH_SCHEDULED' | 'MITIGATE' | 'MONITOR' | 'INVESTIGATE' | 'ACCEPT_RISK';

/** Priorities from most to least urgent; the index is `cases.priority_rank` (5: untriaged). */
export const PRIORITY_ORDER: readonly CaseTriagePriority[] = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'];
export const UNTRIAGED_RANK = 5;

/** A triage answer as a case stores it (the response of `POST /api/v1/triage` less `usage`). */
export interface CaseTriageAnswer {
  priority: CaseTriagePriority;
  recommendedAction: CaseTriageAction;
  reasoning: string;
  confidenceScore: number;
  severityOverride: CaseTriagePriority | null;
  model: string;
  /** ISO 8601 or a Date. */
  triagedAt: string | Date;
  policyVersion: string;
}

export interface CaseTriageInput {
  workspaceId: string;
  caseId: string;
  answer: CaseTriageAnswer;
  /** The key that asked (and was billed); null for a console user or a workflow. */
  keyId: string | null;
  /** The `triage_results` row of the answer, when one was stored. */
  resultId?: string | null;
}

/** The enrichment of a case's CVEs now, over the case aliased `c` (the snapshot's three values). */
const KEV_NOW = sql`EXISTS (SELECT 1 FROM kev_entries k WHERE k.cve_id = ANY(c.cve_ids))`;
const EPSS_NOW = sql`(SELECT max(e.epss) FROM epss_scores e WHERE e.cve_id = ANY(c.cve_ids))`;
const CVSS_NOW = sql`(SELECT max(s.base_score) FROM cvss_scores s WHERE s.cve_id = ANY(c.cve_ids))`;
/**
 * The due date of case `c` under its new priority `l.priority`: an announced breach whose due
 * date the triage moves later is a new breach when it passes (docs/cases.md#due-dates-and-sla).
 */
const DUE_AFTER_TRIAGE = openDueLookupSql(
  { ...basisOf(sql`c`), urgency: sql`l.priority` },
  sql`c.workspace_id`,
);

/**
 * Stores one answer as the case's current triage and appends it to its history, in one
 * statement. False when the case is not in the workspace (or the id is malformed).
 */
export async function recordCaseTriage(db: Db, input: CaseTriageInput): Promise<boolean> {
  return (await recordCaseTriages(db, [input])) === 1;
}

/**
 * Stores many answers in ONE statement (a group commit of case triage jobs): each becomes its
 * case's current triage — unless the case already holds a later one (answers may commit out of
 * order), and with two answers for one case in the list the later wins — and every answer is
 * appended to the history, with the enrichment snapshot taken in the same statement. Clears
 * `triage_stale`. Answers for a case outside their workspace are dropped. Returns how many
 * answers were appended to a history.
 */
export async function recordCaseTriages(db: Db, inputs: readonly CaseTriageInput[]): Promise<number> {
  const rows = inputs.filter((i) => isUuid(i.caseId) && isUuid(i.workspaceId));
  if (rows.length === 0) return 0;
  const col = <T>(f: (i: CaseTriageInput) => T): T[] => rows.map(f);
  const a = (f: (x: CaseTriageAnswer) => unknown) => col((i) => f(i.answer));
  // Named: the text is the same for every group (only values vary), so PostgreSQL plans it once
  // per connection — it runs in every group commit of case triage jobs.
  const res = await db.query<{ n: number }>({
    name: 'record-case-triages',
    ...sql`
WITH input AS (
  SELECT * FROM unnest(
    ${col((i) => i.workspaceId)}::uuid[], ${col((i) => i.caseId)}::uuid[], ${col((i) => i.keyId)}::uuid[],
    ${col((i) => i.resultId ?? null)}::uuid[], ${a((x) => x.priority)}::text[], ${a((x) => x.recommendedAction)}::text[],
    ${a((x) => x.reasoning)}::text[], ${a((x) => x.confidenceScore)}::float8[], ${a((x) => x.severityOverride)}::text[],
    ${a((x) => x.model)}::text[], ${a((x) => new Date(x.triagedAt).toISOString())}::timestamptz[],
    ${a((x) => x.policyVersion)}::text[], ${a((x) => PRIORITY_ORDER.indexOf(x.priority))}::smallint[],
    ${rows.map((_, n) => n)}::int[]
  ) AS t(workspace_id, case_id, key_id, result_id, priority, recommended_action, reasoning, confidence_score,
         severity_override, model, triaged_at, policy_version, priority_rank, ord)
),
answered AS (
  SELECT i.*, ${KEV_NOW} AS kev, ${EPSS_NOW} AS epss, ${CVSS_NOW} AS cvss
  FROM input i JOIN cases c ON c.id = i.case_id AND c.workspace_id = i.workspace_id
),
latest AS (
  SELECT DISTINCT ON (case_id) * FROM answered ORDER BY case_id, triaged_at DESC, ord DESC
),
current AS (
  UPDATE cases c SET priority = l.priority, recommended_action = l.recommended_action, reasoning = l.reasoning,
    confidence_score = l.confidence_score, severity_override = l.severity_override, model = l.model,
    triaged_at = l.triaged_at, policy_version = l.policy_version, priority_rank = l.priority_rank,
    triaged_kev = l.kev, triaged_epss = l.epss, triaged_cvss = l.cvss, triage_stale = false,
    sla_breach_due_at = ${announcementAfterSql(sql`c.sla_breach_due_at`, DUE_AFTER_TRIAGE)}
  FROM latest l
  WHERE c.id = l.case_id AND (c.triaged_at IS NULL OR c.triaged_at <= l.triaged_at)
  RETURNING c.id
),
history AS (
  INSERT INTO case_triage_history (workspace_id, case_id, key_id, result_id, priority, recommended_action, reasoning,
    confidence_score, severity_override, model, triaged_at, policy_version, kev, epss, cvss)
  SELECT workspace_id, case_id, key_id, result_id, priority, recommended_action, reasoning, confidence_score,
    severity_override, model, triaged_at, policy_version, kev, epss, cvss
  FROM answered ORDER BY ord
  RETURNING 1
)
SELECT count(*)::int AS n FROM history`,
  });
  return res.rows[0]!.n;
}

/**
 * Marks stale, in ONE set-based statement, the triaged cases whose enrichment now differs from
 * their snapshot (KEV membership, EPSS by ≥ 0.1, CVSS base score), among the cases carrying any
 * of `cves` — or among every triaged case when `cves` is null (a feed replaced whole, as EPSS
 * is). Runs inside the loader's transaction, so the marks commit with the new enrichment.
 * Never triages. Returns how many cases it marked.
 */
export async function markStaleForCves(db: Db, cves: readonly string[] | null): Promise<number> {
  if (cves !== null && cves.length === 0) return 0;
  const among = cves === null ? sql.empty : sql`AND c.cve_ids && ${[...cves]}::text[]`;
  const res = await db.query(sql`
UPDATE cases c SET triage_stale = true
WHERE c.triaged_at IS NOT NULL AND NOT c.triage_stale AND c.cve_ids <> '{}' ${among}
  AND (${KEV_NOW} IS DISTINCT FROM c.triaged_kev
       OR abs(coalesce(${EPSS_NOW}, 0)::numeric - coalesce(c.triaged_epss, 0)::numeric) >= 0.1
       OR ${CVSS_NOW} IS DISTINCT FROM c.triaged_cvss)`);
  return res.rowCount ?? 0;
}

/**
 * Marks stale every triaged case carrying any of `cves`, whatever its snapshot: for a source the
 * snapshot does not record (CISA's own SSVC decision, docs/cases.md#stale-triage), a changed value
 * is itself the difference. Runs inside the loader's transaction. Returns how many it marked.
 */
export async function markStaleWithCves(db: Db, cves: readonly string[]): Promise<number> {
  if (cves.length === 0) return 0;
  const res = await db.query(sql`
UPDATE cases c SET triage_stale = true
WHERE c.triaged_at IS NOT NULL AND NOT c.triage_stale AND c.cve_ids && ${[...cves]}::text[]`);
  return res.rowCount ?? 0;
}

interface TriageHistoryRow {
  id: string;
  key_id: string | null;
  priority: CaseTriagePriority;
  recommended_action: CaseTriageAction;
  reasoning: string;
  confidence_score: number;
  severity_override: CaseTriagePriority | null;
  model: string;
  triaged_at: Date;
  policy_version: string;
  kev: boolean;
  epss: number | null;
  cvss: string | null;
}

/** One history entry as the API shows it. */
export interface CaseTriageHistoryEntry {
  object: 'case_triage';
  id: string;
  priority: CaseTriagePriority;
  recommendedAction: CaseTriageAction;
  reasoning: string;
  confidenceScore: number;
  severityOverride: CaseTriagePriority | null;
  model: string;
  triagedAt: string;
  policyVersion: string;
  actor: string | null;
  enrichment: { kev: boolean; epss: number | null; cvssScore: number | null };
}

/** A case's triage history, newest first, keyset-paged on the entry id. */
export async function listCaseTriageHistory(
  db: Db,
  c: { workspaceId: string; caseId: string },
  q: { limit: number; cursor?: string },
): Promise<Page<CaseTriageHistoryEntry>> {
  if (!isUuid(c.caseId)) return { data: [], nextCursor: null };
  const after = q.cursor ? sql`AND h.id < ${seqCursor(q.cursor)}::bigint` : sql.empty;
  const { rows } = await db.query<TriageHistoryRow & { seq: string }>(sql`
SELECT h.id, h.id AS seq, h.key_id, h.priority, h.recommended_action, h.reasoning, h.confidence_score,
       h.severity_override, h.model, h.triaged_at, h.policy_version, h.kev, h.epss, h.cvss
FROM case_triage_history h
WHERE h.case_id = ${c.caseId}::uuid AND h.workspace_id = ${c.workspaceId}::uuid ${after}
ORDER BY h.id DESC LIMIT ${q.limit + 1}`);
  const page = seqPage(rows, q.limit);
  return { data: page.data.map(viewHistoryEntry), nextCursor: page.nextCursor };
}

function viewHistoryEntry(h: TriageHistoryRow): CaseTriageHistoryEntry {
  return {
    object: 'case_triage',
    id: String(h.id),
    priority: h.priority,
    recommendedAction: h.recommended_action,
    reasoning: h.reasoning,
    confidenceScore: h.confidence_score,
    severityOverride: h.severity_override,
    model: h.model,
    triagedAt: h.triaged_at.toISOString(),
    policyVersion: h.policy_version,
    actor: h.key_id ? `key:${h.key_id}` : null,
    enrichment: { kev: h.kev, epss: h.epss, cvssScore: h.cvss === null ? null : Number(h.cvss) },
  };
}
