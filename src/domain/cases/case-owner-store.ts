import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { isUuid } from '../../lib/ids.js';

/**
 * A case's owner and tags (`cases.assignee`, `cases.tags`; docs/cases.md#owner-and-tags), one case
 * or many. Tags are kept sorted and without repeats, so two ways of writing the same set store
 * the same array. Callers have checked the values (the API's schemas, the members rule).
 * {@link memberEmails} reads the workspaces area's `memberships` and `console_users` for that rule.
 */

/** The emails of the workspace's console members, lower-cased (a case's assignee is one of them). */
export async function memberEmails(db: Db, workspaceId: string): Promise<string[]> {
  const { rows } = await db.query<{ email: string }>(
    sql`SELECT lower(u.email) AS email FROM memberships m JOIN console_users u ON u.id = m.user_id
         WHERE m.workspace_id = ${workspaceId} ORDER BY 1`,
  );
  return rows.map((r) => r.email);
}

/** What to set: `undefined` leaves a field as it is; an assignee of null removes the owner. */
export interface OwnerChange {
  assignee?: string | null;
  tags?: string[];
}

/** The most tags a case may carry. */
export const MAX_TAGS = 20;

/** Sorted, without repeats. */
export const normaliseTags = (tags: readonly string[]): string[] => [...new Set(tags)].sort();

/**
 * Sets one case's owner and tags on `tx`: `missing` when the workspace has no such case,
 * `unchanged` when it already had them (nothing written), else `changed`.
 */
export async function setOwnerIn(
  tx: Db,
  workspaceId: string,
  caseId: string,
  change: OwnerChange,
): Promise<'changed' | 'unchanged' | 'missing'> {
  if (!isUuid(caseId)) return 'missing';
  const assignee = change.assignee === undefined ? sql`c.assignee` : sql`${change.assignee}::text`;
  const tags = change.tags === undefined ? sql`c.tags` : sql`${normaliseTags(change.tags)}::text[]`;
  const { rows } = await tx.query<{ found: boolean; changed: boolean }>(
    sql`WITH found AS (SELECT id FROM cases WHERE id = ${caseId} AND workspace_id = ${workspaceId}),
        changed AS (
          UPDATE cases c SET assignee = ${assignee}, tags = ${tags}, updated_at = now()
           WHERE c.id = ${caseId} AND c.workspace_id = ${workspaceId}
             AND (c.assignee IS DISTINCT FROM ${assignee} OR c.tags IS DISTINCT FROM ${tags})
          RETURNING c.id)
        SELECT EXISTS (SELECT 1 FROM found) AS found, EXISTS (SELECT 1 FROM changed) AS changed`,
  );
  const r = rows[0]!;
  return !r.found ? 'missing' : r.changed ? 'changed' : 'unchanged';
}

/** What a change of many cases' owner and tags asks for. */
export interface BulkOwnerChange {
  /** Set on every case; `undefined` leaves each case's as it is, null removes it. */
  assignee?: string | null;
  addTags: string[];
  removeTags: string[];
}

export interface BulkOwnerResult {
  /** Cases changed. */
  updated: number;
  /** Cases left as they were: the tags added would take them past {@link MAX_TAGS}. */
  tooManyTags: number;
  /** Ids the workspace has no case of. */
  notFound: number;
  /** The cases whose owner or tags are now different (what the workflow trigger is told). */
  changedIds: string[];
}

/**
 * One statement over the chosen cases of the workspace: the assignee set (when given), tags
 * added and removed. A case the added tags would take past {@link MAX_TAGS} is left whole.
 */
export async function changeOwnerOfCases(
  db: Db,
  workspaceId: string,
  caseIds: readonly string[],
  change: BulkOwnerChange,
): Promise<BulkOwnerResult> {
  const ids = [...new Set(caseIds.filter(isUuid))];
  const assignee = change.assignee === undefined ? sql`c.assignee` : sql`${change.assignee}::text`;
  const { rows } = await db.query<{ found: string; updated: string; changed_ids: string[] }>(
    sql`WITH chosen AS (
          SELECT c.id, c.assignee AS was_assignee, c.tags AS was_tags,
                 ARRAY(SELECT DISTINCT t FROM unnest(c.tags || ${change.addTags}::text[]) t
                        WHERE t <> ALL(${change.removeTags}::text[]) ORDER BY t) AS tags
            FROM cases c WHERE c.workspace_id = ${workspaceId} AND c.id = ANY(${ids}::uuid[])),
        changed AS (
          UPDATE cases c SET assignee = ${assignee}, tags = chosen.tags, updated_at = now()
            FROM chosen WHERE c.id = chosen.id AND cardinality(chosen.tags) <= ${MAX_TAGS}
          RETURNING c.id, (c.assignee IS DISTINCT FROM chosen.was_assignee
                           OR c.tags IS DISTINCT FROM chosen.was_tags) AS differs)
        SELECT (SELECT count(*) FROM chosen) AS found, (SELECT count(*) FROM changed) AS updated,
               ARRAY(SELECT id FROM changed WHERE differs ORDER BY id) AS changed_ids`,
  );
  const found = Number(rows[0]!.found);
  const updated = Number(rows[0]!.updated);
  return {
    updated,
    tooManyTags: found - updated,
    notFound: caseIds.length - found,
    changedIds: rows[0]!.changed_ids,
  };
}
