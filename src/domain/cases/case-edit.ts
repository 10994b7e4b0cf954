import type { Db, Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { Case } from './case.js';
import type { CaseStatus } from './case-status.js';
import { changeStatusIn, getCase, listCases } from './case-store.js';
import type { ListFilters } from './list-filters.js';
import { changeOwnerOfCases, memberEmails, setOwnerIn, type BulkOwnerResult } from './case-owner-store.js';
import { acceptanceErrors } from './risk-acceptance.js';
import type { CaseChangeDeliveries } from './case-deliveries.js';

/**
 * Changes people make to cases (docs/cases.md#statuses, docs/cases.md#owner-and-tags,
 * docs/cases.md#risk-acceptance): one case's status, owner and tags together, or one change
 * over many cases (by id or by the list's filters). The rules that need the database (the
 * assignee is a member) and the clock (the acceptance's expiry) are checked here, before
 * anything is written, and refused as a 422 problem listing each broken rule.
 */

/** What the rules are checked against: the time now and the policy's longest acceptance. */
export interface CaseRules {
  now: Date;
  maxAcceptanceDays: number;
}

/** One case's change: any of status (with its note and expiry), owner and tags. */
export interface CaseEdit {
  workspaceId: string;
  caseId: string;
  actor: string;
  status?: CaseStatus;
  note?: string | null;
  expiresAt?: string;
  /** An email, or null to remove the owner. */
  assignee?: string | null;
  tags?: string[];
}

const refused = (errors: FieldError[]): AppError =>
  new AppError('case_change_refused', 'The change breaks a rule of cases; see errors.', { errors });

/**
 * The assignee as stored (lower-cased), after the members rule: when the workspace has console
 * members, it must be one of their emails.
 */
async function checkedAssignee(
  db: Db,
  workspaceId: string,
  assignee: string | null | undefined,
  errors: FieldError[],
  path = '/assignee',
): Promise<string | null | undefined> {
  if (assignee === undefined || assignee === null) return assignee;
  const email = assignee.trim().toLowerCase();
  const members = await memberEmails(db, workspaceId);
  if (members.length > 0 && !members.includes(email)) {
    errors.push({ path, message: 'must be the email of a member of the workspace' });
  }
  return email;
}

/**
 * The whole change of one case in one transaction, with its workflow deliveries: a status change
 * speaks for the whole change (`case.status_changed`, its payload carries the owner and tags), an
 * owner or tags change alone is `case.updated`. Null when the workspace has no such case.
 */
export async function editCase<R>(
  pool: Pool,
  input: CaseEdit,
  rules: CaseRules,
  deliveries: CaseChangeDeliveries<R>,
): Promise<{ case: Case; statusChanged: boolean; ownerChanged: boolean } | null> {
  const errors = acceptanceErrors(input, rules.now, rules.maxAcceptanceDays);
  const assignee = await checkedAssignee(pool, input.workspaceId, input.assignee, errors);
  if (errors.length > 0) throw refused(errors);
  const outcome = await withTransaction(pool, async (tx) => {
    let status: 'changed' | 'unchanged' | 'missing' = 'unchanged';
    if (input.status !== undefined) {
      status = await changeStatusIn(tx, {
        workspaceId: input.workspaceId,
        caseId: input.caseId,
        status: input.status,
        note: input.note?.trim() || null,
        actor: input.actor,
        expiresAt: input.expiresAt === undefined ? null : new Date(input.expiresAt),
      });
      if (status === 'missing') return status;
    }
    let owner: 'changed' | 'unchanged' | 'missing' = 'unchanged';
    if (assignee !== undefined || input.tags !== undefined) {
      owner = await setOwnerIn(tx, input.workspaceId, input.caseId, { assignee, tags: input.tags });
      if (owner === 'missing') return owner;
    }
    const event = status === 'changed' ? 'case.status_changed' : owner === 'changed' ? 'case.updated' : null;
    const recorded = event ? await deliveries.record(tx, input.workspaceId, [input.caseId], event) : null;
    return { status, owner, recorded };
  });
  if (outcome === 'missing') return null;
  if (outcome.recorded !== null) await deliveries.queue(outcome.recorded);
  const c = await getCase(pool, input.workspaceId, input.caseId, rules.now);
  return c
    ? { case: c, statusChanged: outcome.status === 'changed', ownerChanged: outcome.owner === 'changed' }
    : null;
}

/** Cases chosen by id, or by the list's filters (newest first, at most `max`). */
export interface CaseChoice {
  workspaceId: string;
  caseIds?: string[];
  filter?: ListFilters;
  max: number;
}

/** The input of a status change of many cases. */
export interface BulkStatusChange extends CaseChoice {
  status: CaseStatus;
  note: string | null;
  expiresAt?: string;
  actor: string;
}

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
 * One status change (with its note, expiry and actor) applied to many cases, each in its own
 * transaction exactly as a single `PATCH` writes it (its own history entry), after the rules are
 * checked once for all.
 */
export async function changeStatusOfCases<R>(
  pool: Pool,
  input: BulkStatusChange,
  rules: CaseRules,
  deliveries: CaseChangeDeliveries<R>,
): Promise<BulkStatusResult> {
  const errors = acceptanceErrors(input, rules.now, rules.maxAcceptanceDays);
  if (errors.length > 0) throw refused(errors);
  const ids = await chosenIds(pool, input);
  const result: BulkStatusResult = { changed: 0, unchanged: 0, notFound: 0, changedIds: [] };
  const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt);
  for (const caseId of ids) {
    const { outcome, recorded } = await withTransaction(pool, async (tx) => {
      const outcome = await changeStatusIn(tx, {
        ...input,
        caseId,
        note: input.note?.trim() || null,
        expiresAt,
      });
      return {
        outcome,
        recorded:
          outcome === 'changed'
            ? await deliveries.record(tx, input.workspaceId, [caseId], 'case.status_changed')
            : null,
      };
    });
    if (recorded !== null) await deliveries.queue(recorded);
    if (outcome === 'missing') result.notFound += 1;
    else if (outcome === 'unchanged') result.unchanged += 1;
    else {
      result.changed += 1;
      result.changedIds.push(caseId);
    }
  }
  return result;
}

/** The input of an owner and tags change of many cases. */
export interface BulkOwnerInput extends CaseChoice {
  assignee?: string | null;
  addTags?: string[];
  removeTags?: string[];
}

/**
 * Sets the owner of, and adds and removes tags on, many cases in one statement, with a
 * `case.updated` delivery for each case whose owner or tags are now different.
 */
export async function changeOwnerOfMany<R>(
  pool: Pool,
  input: BulkOwnerInput,
  deliveries: CaseChangeDeliveries<R>,
): Promise<BulkOwnerResult> {
  const errors: FieldError[] = [];
  const assignee = await checkedAssignee(pool, input.workspaceId, input.assignee, errors);
  if (errors.length > 0) throw refused(errors);
  const ids = await chosenIds(pool, input);
  const { result, recorded } = await withTransaction(pool, async (tx) => {
    const result = await changeOwnerOfCases(tx, input.workspaceId, ids, {
      ...(assignee !== undefined ? { assignee } : {}),
      addTags: input.addTags ?? [],
      removeTags: input.removeTags ?? [],
    });
    const recorded =
      result.changedIds.length > 0
        ? await deliveries.record(tx, input.workspaceId, result.changedIds, 'case.updated')
        : null;
    return { result, recorded };
  });
  if (recorded !== null) await deliveries.queue(recorded);
  return result;
}

/**
 * The ids of a choice: as given, or the filter's cases through the list's own query. A filter
 * that matches more than `max` cases is refused whole rather than changing an arbitrary part.
 */
async function chosenIds(db: Db, choice: CaseChoice): Promise<string[]> {
  if (choice.caseIds) return choice.caseIds;
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await listCases(db, choice.workspaceId, {
      ...(choice.filter ?? {}),
      limit: Math.min(200, choice.max + 1 - ids.length),
      cursor,
    });
    ids.push(...page.data.map((c) => c.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor && ids.length <= choice.max);
  if (ids.length > choice.max) {
    throw refused([
      { path: '/filter', message: `matches more than ${choice.max} cases; narrow it or choose cases by id` },
    ]);
  }
  return ids;
}
