import type { Queryable } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { isUuid } from '../../lib/ids.js';
import type { Workflow } from './workflow.js';

/**
 * The workflows themselves (m013's `workflows`): their definitions and, kept on the row by the
 * delivery store, the latest delivery's outcome. Links, deliveries, inbound events and leases
 * have their own stores beside this one.
 */

interface WorkflowDbRow {
  id: string;
  workspace_id: string;
  name: string;
  kind: Workflow['kind'];
  enabled: boolean;
  target: Workflow['target'];
  credential_sealed: string | null;
  credential_hint: string | null;
  secret_sealed: string;
  rule: Workflow['rule'];
  fields: Workflow['fields'];
  status_map: Workflow['statusMap'];
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

/**
 * A workflow to store: its definition, without what deliveries record on it. The `id` is chosen
 * by the caller: the sealed values are bound to it.
 */
export type NewWorkflow = Omit<
  Workflow,
  'lastError' | 'lastDeliveryStatus' | 'lastDeliveryAt' | 'createdAt' | 'updatedAt'
>;

/** A JSON column's new value, or NULL (coalesced to the stored one) when absent. */
const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

export async function insertWorkflow(db: Queryable, w: NewWorkflow): Promise<Workflow> {
  const { rows } = await db.query<WorkflowDbRow>(
    sql`INSERT INTO workflows (workspace_id, name, kind, enabled, target, credential_sealed, credential_hint,
                               secret_sealed, rule, fields, status_map, id)
        VALUES (${w.workspaceId}, ${w.name}, ${w.kind}, ${w.enabled}, ${json(w.target)}, ${w.credentialSealed},
                ${w.credentialHint}, ${w.secretSealed}, ${json(w.rule)}, ${json(w.fields)}, ${json(w.statusMap)},
                ${w.id})
        RETURNING *`,
  );
  return toWorkflow(rows[0]!);
}

/** The changed parts of a workflow; absent ones stay as they are. */
export type WorkflowPatch = Partial<
  Pick<Workflow, 'name' | 'enabled' | 'target' | 'rule' | 'fields' | 'statusMap'> & {
    credentialSealed: string;
    credentialHint: string;
  }
>;

export async function updateWorkflow(
  db: Queryable,
  workspaceId: string,
  id: string,
  p: WorkflowPatch,
): Promise<Workflow | null> {
  if (!isUuid(id)) return null;
  const enabled = p.enabled ?? null;
  const { rows } = await db.query<WorkflowDbRow>(
    sql`UPDATE workflows SET name = coalesce(${p.name ?? null}, name), enabled = coalesce(${enabled}::boolean, enabled),
          target = coalesce(${json(p.target)}, target),
          credential_sealed = coalesce(${p.credentialSealed ?? null}, credential_sealed),
          credential_hint = coalesce(${p.credentialHint ?? null}, credential_hint),
          rule = coalesce(${json(p.rule)}, rule), fields = coalesce(${json(p.fields)}, fields),
          status_map = coalesce(${json(p.statusMap)}, status_map),
          last_error = CASE WHEN ${enabled}::boolean THEN NULL ELSE last_error END, updated_at = now()
        WHERE id = ${id} AND workspace_id = ${workspaceId} RETURNING *`,
  );
  return rows[0] ? toWorkflow(rows[0]) : null;
}

export async function getWorkflow(db: Queryable, workspaceId: string, id: string): Promise<Workflow | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<WorkflowDbRow>(
    sql`SELECT * FROM workflows WHERE id = ${id} AND workspace_id = ${workspaceId}`,
  );
  return rows[0] ? toWorkflow(rows[0]) : null;
}

/** By id alone: for the delivery job and inbound webhooks, which carry no API key. */
export async function getWorkflowById(db: Queryable, id: string): Promise<Workflow | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<WorkflowDbRow>(sql`SELECT * FROM workflows WHERE id = ${id}`);
  return rows[0] ? toWorkflow(rows[0]) : null;
}

export async function listWorkflows(db: Queryable, workspaceId: string): Promise<Workflow[]> {
  const { rows } = await db.query<WorkflowDbRow>(
    sql`SELECT * FROM workflows WHERE workspace_id = ${workspaceId} ORDER BY created_at DESC, id LIMIT 500`,
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
    sql`DELETE FROM workflows WHERE id = ${id} AND workspace_id = ${workspaceId} RETURNING id, name, kind`,
  );
  return rows[0] ?? null;
}

export async function enabledWorkflows(db: Queryable, workspaceId: string): Promise<Workflow[]> {
  const { rows } = await db.query<WorkflowDbRow>(
    sql`SELECT * FROM workflows WHERE workspace_id = ${workspaceId} AND enabled ORDER BY created_at`,
  );
  return rows.map(toWorkflow);
}
