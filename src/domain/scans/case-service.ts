import type { Db, Pool } from '../../db/pool.js';
import type { ListFilters } from './list-filters.js';
import { caseStatus, changeCaseStatus, listCases } from './case-store.js';

export interface BulkStatusResult {
  /** Cases whose status changed (a history entry each). */
  changed: number;
  /** Cases that already had the status. */
  unchanged: number;
  /** Ids not found in the workspace. */
  notFound: number;
  /** The ids of the cases whose status changed (what a workflow trigger is told). */
  changedIds: string[];
}

/**
 * One status change (with its note and actor) applied to many cases, each through
 * {@link changeCaseStatus}, so each case gets its own history entry exactly as a single PATCH
 * would write it. `filter` selects cases with the list's own query, at most `max` of them.
 */
export async function changeStatusOfCases(
  pool: Pool,
  input: {
    workspaceId: string;
    caseIds?: string[];
    filter?: ListFilters;
    max: number;
    status: string;
    note: string | null;
    actor: string;
  },
): Promise<BulkStatusResult> {
  const ids = input.caseIds ?? (await caseIdsOf(pool, input.workspaceId, input.filter ?? {}, input.max));
  const result: BulkStatusResult = { changed: 0, unchanged: 0, notFound: 0, changedIds: [] };
  for (const caseId of ids) {
    const before = await caseStatus(pool, input.workspaceId, caseId);
    const after = await changeCaseStatus(pool, { ...input, caseId });
    if (!after || before === null) result.notFound += 1;
    else if (before === input.status) result.unchanged += 1;
    else {
      result.changed += 1;
      result.changedIds.push(caseId);
    }
  }
  return result;
}

/** Ids of the cases a filter selects (newest first), through the list's own query, up to `max`. */
async function caseIdsOf(db: Db, workspaceId: string, filter: ListFilters, max: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await listCases(db, workspaceId, {
      ...filter,
      limit: Math.min(200, max - ids.length),
      cursor,
    });
    ids.push(...page.data.map((c) => c.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor && ids.length < max);
  return ids;
}
