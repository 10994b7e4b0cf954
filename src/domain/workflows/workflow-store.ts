import type { Queryable } from '../../db/pool.js';
import { isUuid } from '../../lib/ids.js';
import type { CaseStatus } from '../cases/case-status.js';
import { ruleWhere } from './rule-sql.js';
import type { DeliveryCase, WorkflowEvent, WorkflowFields, WorkflowRule } from './types.js';
import type { Workflow, WorkflowTarget } from './workflow.js';

/** The one module naming the workflow tables (m013): workflows, links, deliveries, inbound events. */

interface WorkflowDbRow {
  id: string;
  workspace_id: string;
  name: string;
  kind: Workflow['kind'];
  enabled: boolean;
  target: WorkflowTarget;
  credential_sealed: string | null;
  credential_hint: string | null;
  secret_sealed: string;
  rule: WorkflowRule;
  fields: WorkflowFields;
  status_map: Record<string, CaseStatus>;
  last_error: string | null;
  last_delivery_status: string | null;
  last_delivery_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const toWorkflow = (r: WorkflowDbRow): Workflow => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  kind: r.kind,
  enabled: r.enabled,
  target: r.target,
  credentialSealed: r.credential_sealed,
  credentialHint: r.credential_hint,
  secretSealed: r.secret_sealed,
  rule: r.rule,
  fields: r.fields,
  statusMap: r.status_map,
  lastError: r.last_error,
  lastDeliveryStatus: r.last_delivery_status,
  lastDeliveryAt: r.last_delivery_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export interface NewWorkflow {
  /** Chosen by the caller: the sealed values are bound to it. */
  id: string;
  workspaceId: string;
  name: string;
  kind: Workflow['kind'];
  enabled: boolean;
  target: WorkflowTarget;
  credentialSealed: string | null;
  credentialHint: string | null;
  secretSealed: string;
  rule: WorkflowRule;
  fields: WorkflowFields;
  statusMap: Record<string, CaseStatus>;
}

export async function insertWorkflow(db: Queryable, w: NewWorkflow): Promise<Workflow> {
  const { rows } = await db.query<WorkflowDbRow>(
    `INSERT INTO workflows (workspace_id, name, kind, enabled, target, credential_sealed, credential_hint, secret_sealed,
                            rule, fields, status_map, id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *`,
    [
      w.workspaceId,
      w.name,
      w.kind,
      w.enabled,
      JSON.stringify(w.target),
      w.credentialSealed,
      w.credentialHint,
      w.secretSealed,
      JSON.stringify(w.rule),
      JSON.stringify(w.fields),
      JSON.stringify(w.statusMap),
      w.id,
    ],
  );
  return toWorkflow(rows[0]!);
}

/** The changed parts of a workflow; absent ones stay as they are. */
export interface WorkflowPatch {
  name?: string;
  enabled?: boolean;
  target?: WorkflowTarget;
  credentialSealed?: string;
  credentialHint?: string;
  rule?: WorkflowRule;
  fields?: WorkflowFields;
  statusMap?: Record<string, CaseStatus>;
}

export async function updateWorkflow(
  db: Queryable,
  workspaceId: string,
  id: string,
  p: WorkflowPatch,
): Promise<Workflow | null> {
  if (!isUuid(id)) return null;
  const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));
  const { rows } = await db.query<WorkflowDbRow>(
    `UPDATE workflows SET name = coalesce($3, name), enabled = coalesce($4, enabled), target = coalesce($5, target),
       credential_sealed = coalesce($6, credential_sealed), credential_hint = coalesce($7, credential_hint),
       rule = coalesce($8, rule), fields = coalesce($9, fields), status_map = coalesce($10, status_map),
       last_error = CASE WHEN $4::boolean THEN NULL ELSE last_error END, updated_at = now()
     WHERE id = $1 AND workspace_id = $2 RETURNING *`,
    [
      id,
      workspaceId,
      p.name ?? null,
      p.enabled ?? null,
      json(p.target),
      p.credentialSealed ?? null,
      p.credentialHint ?? null,
      json(p.rule),
      json(p.fields),
      json(p.statusMap),
    ],
  );
  return rows[0] ? toWorkflow(rows[0]) : null;
}

export async function getWorkflow(db: Queryable, workspaceId: string, id: string): Promise<Workflow | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<WorkflowDbRow>(
    `SELECT * FROM workflows WHERE id = $1 AND workspace_id = $2`,
    [id, workspaceId],
  );
  return rows[0] ? toWorkflow(rows[0]) : null;
}

/** By id alone: for the delivery job and inbound webhooks, which carry no API key. */
export async function getWorkflowById(db: Queryable, id: string): Promise<Workflow | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<WorkflowDbRow>(`SELECT * FROM workflows WHERE id = $1`, [id]);
  return rows[0] ? toWorkflow(rows[0]) : null;
}

export async function listWorkflows(db: Queryable, workspaceId: string): Promise<Workflow[]> {
  const { rows } = await db.query<WorkflowDbRow>(
    `SELECT * FROM workflows WHERE workspace_id = $1 ORDER BY created_at DESC, id LIMIT 500`,
    [workspaceId],
  );
  return rows.map(toWorkflow);
}

/** Deletes a workflow of the workspace; answers what it was (for the audit log), or null. */
export async function deleteWorkflow(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<Pick<Workflow, 'id' | 'name' | 'kind'> | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<Pick<Workflow, 'id' | 'name' | 'kind'>>(
    `DELETE FROM workflows WHERE id = $1 AND workspace_id = $2 RETURNING id, name, kind`,
    [id, workspaceId],
  );
  return rows[0] ?? null;
}

export async function enabledWorkflows(db: Queryable, workspaceId: string): Promise<Workflow[]> {
  const { rows } = await db.query<WorkflowDbRow>(
    `SELECT * FROM workflows WHERE workspace_id = $1 AND enabled ORDER BY created_at`,
    [workspaceId],
  );
  return rows.map(toWorkflow);
}

/** Which cases of the workspace a trigger is about. */
export type CaseSelection =
  | { caseIds: string[] }
  /** The cases a completed scan created (a re-upload of the same file creates none). */
  | { createdByScan: string }
  /** The resolved cases a completed scan saw again and reopened. */
  | { reopenedByScan: string };

/**
 * Inserts one pending delivery for each case of `selection` that matches the workflow's rule,
 * or that already has an issue in it (a linked case keeps its issue up to date even when it
 * stops matching, e.g. once resolved). One statement per workflow; returns the delivery ids.
 */
export async function insertMatchingDeliveries(
  db: Queryable,
  w: Workflow,
  selection: CaseSelection,
  event: WorkflowEvent,
): Promise<string[]> {
  const params: unknown[] = [w.workspaceId, w.id, event];
  let scope: string;
  if ('createdByScan' in selection) {
    if (!isUuid(selection.createdByScan)) return [];
    params.push(selection.createdByScan);
    scope = `c.first_scan_id = $${params.length}::uuid`;
  } else if ('reopenedByScan' in selection) {
    if (!isUuid(selection.reopenedByScan)) return [];
    params.push(`scan:${selection.reopenedByScan}`);
    scope = `c.id IN (SELECT h.case_id FROM case_status_history h WHERE h.actor = $${params.length}
               AND h.to_status = 'open')`;
  } else {
    const ids = selection.caseIds.filter(isUuid);
    if (ids.length === 0) return [];
    params.push(ids);
    scope = `c.id = ANY($${params.length}::uuid[])`;
  }
  const rule = ruleWhere(w.rule, params);
  const matches = rule.length > 0 ? rule.join(' AND ') : 'true';
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO workflow_deliveries (workflow_id, workspace_id, case_id, event)
     SELECT $2, $1, c.id, $3 FROM cases c
     WHERE c.workspace_id = $1 AND ${scope}
       AND ((${matches}) OR EXISTS (SELECT 1 FROM workflow_links l WHERE l.workflow_id = $2 AND l.case_id = c.id))
     ORDER BY c.seq
     RETURNING id`,
    params,
  );
  return rows.map((r) => r.id);
}

export async function insertTestDelivery(db: Queryable, w: Workflow): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO workflow_deliveries (workflow_id, workspace_id, event) VALUES ($1, $2, 'workflow.test') RETURNING id`,
    [w.id, w.workspaceId],
  );
  return rows[0]!.id;
}

export interface DeliveryRow {
  id: string;
  seq: string;
  workflow_id: string;
  workspace_id: string;
  case_id: string | null;
  event: WorkflowEvent;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  response_code: number | null;
  error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  finished_at: Date | null;
}

export async function getDelivery(db: Queryable, id: string): Promise<DeliveryRow | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<DeliveryRow>(`SELECT * FROM workflow_deliveries WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

/**
 * The oldest delivery of `d`'s case in `d`'s workflow still pending before `d` (the case's head,
 * which `d` waits behind), or null when `d` is the head itself.
 */
export async function pendingHeadBefore(
  db: Queryable,
  d: DeliveryRow,
): Promise<Pick<DeliveryRow, 'id' | 'seq' | 'next_attempt_at'> | null> {
  const { rows } = await db.query<Pick<DeliveryRow, 'id' | 'seq' | 'next_attempt_at'>>(
    `SELECT id, seq, next_attempt_at FROM workflow_deliveries
      WHERE workflow_id = $1 AND case_id = $2 AND status = 'pending' AND seq < $3
      ORDER BY seq LIMIT 1`,
    [d.workflow_id, d.case_id, d.seq],
  );
  return rows[0] ?? null;
}

export async function listDeliveries(
  db: Queryable,
  workflowId: string,
  q: { limit: number; before?: string },
): Promise<DeliveryRow[]> {
  const params: unknown[] = [workflowId, q.limit + 1];
  let before = '';
  if (q.before) {
    params.push(q.before);
    before = `AND seq < $3::bigint`;
  }
  const { rows } = await db.query<DeliveryRow>(
    `SELECT * FROM workflow_deliveries WHERE workflow_id = $1 ${before} ORDER BY seq DESC LIMIT $2`,
    params,
  );
  return rows;
}

/** Records an attempt's outcome on the delivery and, as its latest, on the workflow. */
export async function recordAttempt(
  db: Queryable,
  ids: string[],
  o: {
    workflowId: string;
    status: DeliveryRow['status'];
    responseCode: number | null;
    error: string | null;
    nextAttemptAt: Date | null;
  },
): Promise<void> {
  await db.query(
    `UPDATE workflow_deliveries SET status = $2, attempts = attempts + 1, response_code = $3, error = $4,
       next_attempt_at = $5, finished_at = CASE WHEN $2 = 'pending' THEN NULL ELSE now() END
     WHERE id = ANY($1::uuid[])`,
    [ids, o.status, o.responseCode, o.error, o.nextAttemptAt],
  );
  await db.query(
    `UPDATE workflows SET last_delivery_status = $2, last_delivery_at = now(),
       last_error = CASE WHEN $2 = 'delivered' THEN last_error ELSE $3 END
     WHERE id = $1`,
    [o.workflowId, o.status, o.error],
  );
}

/** A pending delivery's next try, without counting an attempt (the rate limit held it back). */
export async function setNextAttempt(db: Queryable, ids: string[], at: Date): Promise<void> {
  await db.query(
    `UPDATE workflow_deliveries SET next_attempt_at = $2 WHERE id = ANY($1::uuid[]) AND status = 'pending'`,
    [ids, at],
  );
}

export interface LinkRow {
  workflow_id: string;
  case_id: string;
  workspace_id: string;
  marker: string;
  external_id: string | null;
  url: string | null;
  remote_state: 'open' | 'closed';
  create_attempts: number;
  last_delivered_at: Date | null;
}

/** The link of a case in a workflow, created (with its marker) if it is not there yet. */
export async function ensureLink(
  db: Queryable,
  w: Workflow,
  caseId: string,
  marker: string,
): Promise<LinkRow> {
  await db.query(
    `INSERT INTO workflow_links (workflow_id, case_id, workspace_id, marker) VALUES ($1, $2, $3, $4)
     ON CONFLICT (workflow_id, case_id) DO NOTHING`,
    [w.id, caseId, w.workspaceId, marker],
  );
  const { rows } = await db.query<LinkRow>(
    `SELECT * FROM workflow_links WHERE workflow_id = $1 AND case_id = $2`,
    [w.id, caseId],
  );
  return rows[0]!;
}

/**
 * Written before a remote create: a later attempt that finds no external id searches first.
 * `by` -1 takes back a count whose create was never sent (held back by the rate limit).
 */
export async function countCreateAttempt(db: Queryable, l: LinkRow, by: 1 | -1 = 1): Promise<void> {
  await db.query(
    `UPDATE workflow_links SET create_attempts = greatest(0, create_attempts + $3)
     WHERE workflow_id = $1 AND case_id = $2`,
    [l.workflow_id, l.case_id, by],
  );
}

export async function updateLink(
  db: Queryable,
  l: Pick<LinkRow, 'workflow_id' | 'case_id'>,
  p: { externalId?: string; url?: string; remoteState?: 'open' | 'closed'; delivered?: boolean },
): Promise<void> {
  await db.query(
    `UPDATE workflow_links SET external_id = coalesce($3, external_id), url = coalesce($4, url),
       remote_state = coalesce($5, remote_state),
       last_delivered_at = CASE WHEN $6 THEN now() ELSE last_delivered_at END
     WHERE workflow_id = $1 AND case_id = $2`,
    [
      l.workflow_id,
      l.case_id,
      p.externalId ?? null,
      p.url ?? null,
      p.remoteState ?? null,
      p.delivered ?? false,
    ],
  );
}

export async function findLinkByExternalId(
  db: Queryable,
  workflowId: string,
  externalId: string,
): Promise<LinkRow | null> {
  const { rows } = await db.query<LinkRow>(
    `SELECT * FROM workflow_links WHERE workflow_id = $1 AND external_id = $2`,
    [workflowId, externalId],
  );
  return rows[0] ?? null;
}

export interface CaseLinkView {
  workflowId: string;
  kind: string;
  externalId: string | null;
  url: string | null;
  state: 'open' | 'closed';
  lastDeliveredAt: string | null;
}

/** A case's external issues, for `GET /api/v1/cases/:id`. */
export async function caseLinks(db: Queryable, caseId: string): Promise<CaseLinkView[]> {
  const { rows } = await db.query<LinkRow & { kind: string }>(
    `SELECT l.*, w.kind FROM workflow_links l JOIN workflows w ON w.id = l.workflow_id WHERE l.case_id = $1
     ORDER BY l.created_at`,
    [caseId],
  );
  return rows.map((r) => ({
    workflowId: r.workflow_id,
    kind: r.kind,
    externalId: r.external_id,
    url: r.url,
    state: r.remote_state,
    lastDeliveredAt: r.last_delivered_at?.toISOString() ?? null,
  }));
}

/** Remembers an inbound delivery id; false when it was seen before (a replay). */
export async function firstSightOfInbound(
  db: Queryable,
  workflowId: string,
  deliveryId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO workflow_inbound_events (workflow_id, delivery_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
    [workflowId, deliveryId.slice(0, 200)],
  );
  return (rowCount ?? 0) > 0;
}

/** The case as a delivery renders it, with its KEV membership, highest EPSS and environment. */
export async function loadDeliveryCase(
  db: Queryable,
  caseId: string,
  baseUrl: string,
): Promise<DeliveryCase | null> {
  const { rows } = await db.query<{
    id: string;
    title: string;
    severity: string;
    priority: string | null;
    recommended_action: string | null;
    reasoning: string | null;
    status: string;
    scanner: string;
    rule_id: string | null;
    cve_ids: string[];
    cvss_score: string | null;
    epss: number | null;
    kev: boolean;
    kev_due_date: string | null;
    asset: string | null;
    host: string | null;
    component: string | null;
    environment: string | null;
    first_seen: Date;
    last_seen: Date;
  }>(
    `SELECT c.id, c.title, c.severity, c.priority, c.recommended_action, c.reasoning, c.status, c.scanner, c.rule_id,
            c.cve_ids, c.cvss_score, c.asset, c.host, c.component, c.first_seen, c.last_seen,
            EXISTS (SELECT 1 FROM kev_entries k WHERE k.cve_id = ANY(c.cve_ids)) AS kev,
            (SELECT to_char(min(k.due_date), 'YYYY-MM-DD') FROM kev_entries k WHERE k.cve_id = ANY(c.cve_ids))
              AS kev_due_date,
            (SELECT max(e.epss) FROM epss_scores e WHERE e.cve_id = ANY(c.cve_ids)) AS epss,
            (SELECT s.asset_environment FROM scans s WHERE s.id = c.last_scan_id) AS environment
     FROM cases c WHERE c.id = $1`,
    [caseId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.id,
    title: r.title,
    severity: r.severity,
    priority: r.priority,
    recommendedAction: r.recommended_action,
    reasoning: r.reasoning,
    status: r.status,
    scanner: r.scanner,
    ruleId: r.rule_id,
    cveIds: r.cve_ids,
    cvssScore: r.cvss_score === null ? null : Number(r.cvss_score),
    epss: r.epss,
    kev: r.kev,
    asset: r.asset,
    host: r.host,
    component: r.component,
    environment: r.environment,
    firstSeen: r.first_seen,
    lastSeen: r.last_seen,
    url: `${baseUrl.replace(/\/+$/, '')}/api/v1/cases/${r.id}`,
    consoleUrl: `${baseUrl.replace(/\/+$/, '')}/cases/${r.id}`,
    kevDueDate: r.kev_due_date,
  };
}

/**
 * Takes the lease on one (workflow, case) for `holder` until `ttlMs` from now (m019): answers
 * `null` when taken, else when the current holder's lease runs out. A lease whose time is up
 * (its holder crashed) is taken over. One autocommitted statement: no connection is kept.
 */
export async function takeCaseLease(
  db: Queryable,
  workflowId: string,
  caseId: string,
  holder: string,
  ttlMs: number,
): Promise<Date | null> {
  const { rows } = await db.query<{ holder: string; leased_until: Date }>(
    `WITH taken AS (
       INSERT INTO workflow_case_leases (workflow_id, case_id, holder, leased_until)
       VALUES ($1, $2, $3, now() + make_interval(secs => $4::double precision / 1000))
       ON CONFLICT (workflow_id, case_id) DO UPDATE SET holder = EXCLUDED.holder, leased_until = EXCLUDED.leased_until
         WHERE workflow_case_leases.leased_until < now()
       RETURNING holder, leased_until)
     SELECT holder, leased_until FROM taken
     UNION ALL
     SELECT holder, leased_until FROM workflow_case_leases
      WHERE workflow_id = $1 AND case_id = $2 AND NOT EXISTS (SELECT 1 FROM taken)`,
    [workflowId, caseId, holder, ttlMs],
  );
  const r = rows[0];
  if (!r) return new Date(); // released between the two reads: free, try again at once
  return r.holder === holder ? null : r.leased_until;
}

/** Extends `holder`'s lease by `ttlMs` from now; false when it is no longer `holder`'s. */
export async function renewCaseLease(
  db: Queryable,
  workflowId: string,
  caseId: string,
  holder: string,
  ttlMs: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE workflow_case_leases SET leased_until = now() + make_interval(secs => $4::double precision / 1000)
     WHERE workflow_id = $1 AND case_id = $2 AND holder = $3`,
    [workflowId, caseId, holder, ttlMs],
  );
  return (rowCount ?? 0) > 0;
}

/** Gives the lease back (only `holder`'s own: a lease taken over after it ran out stays). */
export async function releaseCaseLease(
  db: Queryable,
  workflowId: string,
  caseId: string,
  holder: string,
): Promise<void> {
  await db.query(`DELETE FROM workflow_case_leases WHERE workflow_id = $1 AND case_id = $2 AND holder = $3`, [
    workflowId,
    caseId,
    holder,
  ]);
}

/**
 * Pending deliveries whose job may be gone (a crash between the trigger's INSERT and its enqueue,
 * or a queue that lost its data): created more than `olderThanMs` ago and not waiting for a
 * known next attempt. Re-enqueued by id, which the queue ignores for a job it still has.
 */
export async function orphanedDeliveries(
  db: Queryable,
  olderThanMs: number,
  limit = 10_000,
): Promise<{ id: string; workflow_id: string }[]> {
  const { rows } = await db.query<{ id: string; workflow_id: string }>(
    `SELECT id, workflow_id FROM workflow_deliveries
     WHERE status = 'pending' AND created_at < now() - make_interval(secs => $1::double precision / 1000)
       AND (next_attempt_at IS NULL OR next_attempt_at < now() - interval '1 minute')
     ORDER BY seq LIMIT $2`,
    [olderThanMs, limit],
  );
  return rows;
}
