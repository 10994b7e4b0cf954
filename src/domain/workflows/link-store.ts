import type { Queryable } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import type { Workflow } from './workflow.js';

/**
 * The links (m013's `workflow_links`): the one external issue of a case in a workflow, with the
 * marker it carries so a retry after a crash finds it again (docs/workflows.md#exactly-one-issue-per-case).
 */

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
    sql`INSERT INTO workflow_links (workflow_id, case_id, workspace_id, marker)
        VALUES (${w.id}, ${caseId}, ${w.workspaceId}, ${marker})
        ON CONFLICT (workflow_id, case_id) DO NOTHING`,
  );
  const { rows } = await db.query<LinkRow>(
    sql`SELECT * FROM workflow_links WHERE workflow_id = ${w.id} AND case_id = ${caseId}`,
  );
  return rows[0]!;
}

/**
 * Written before a remote create: a later attempt that finds no external id searches first.
 * `by` -1 takes back a count whose create was never sent (held back by the rate limit).
 */
export async function countCreateAttempt(db: Queryable, l: LinkRow, by: 1 | -1 = 1): Promise<void> {
  await db.query(
    sql`UPDATE workflow_links SET create_attempts = greatest(0, create_attempts + ${by})
        WHERE workflow_id = ${l.workflow_id} AND case_id = ${l.case_id}`,
  );
}

export async function updateLink(
  db: Queryable,
  l: Pick<LinkRow, 'workflow_id' | 'case_id'>,
  p: { externalId?: string; url?: string; remoteState?: 'open' | 'closed'; delivered?: boolean },
): Promise<void> {
  await db.query(
    sql`UPDATE workflow_links SET external_id = coalesce(${p.externalId ?? null}, external_id),
          url = coalesce(${p.url ?? null}, url), remote_state = coalesce(${p.remoteState ?? null}, remote_state),
          last_delivered_at = CASE WHEN ${p.delivered ?? false}::boolean THEN now() ELSE last_delivered_at END
        WHERE workflow_id = ${l.workflow_id} AND case_id = ${l.case_id}`,
  );
}

export async function findLinkByExternalId(
  db: Queryable,
  workflowId: string,
  externalId: string,
): Promise<LinkRow | null> {
  const { rows } = await db.query<LinkRow>(
    sql`SELECT * FROM workflow_links WHERE workflow_id = ${workflowId} AND external_id = ${externalId}`,
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
    sql`SELECT l.*, w.kind FROM workflow_links l JOIN workflows w ON w.id = l.workflow_id
        WHERE l.case_id = ${caseId}
        ORDER BY l.created_at`,
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
