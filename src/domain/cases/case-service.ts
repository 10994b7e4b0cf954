import type { Db, Pool } from '../../db/pool.js';
import type { Page } from '../../lib/cursor.js';
import type { ListFilters } from './list-filters.js';
import type { Case } from './case.js';
import type { CaseSort } from './case-sort.js';
import {
  caseDashboard,
  caseDetail,
  caseStatus,
  changeCaseStatus,
  countCases,
  getCase,
  listCaseEvidence,
  listCases,
  type CaseCounts,
  type CaseDashboard,
  type CaseDetail,
  type Evidence,
} from './case-store.js';
import { listCaseTriageHistory, type CaseTriageHistoryEntry } from './case-triage-store.js';
import { unmarkDuplicate } from './case-duplicates.js';
import { getFinding, listFindings, type StoredFinding } from './finding-store.js';

/** The input of one status change: who changed which case of which workspace to what, and why. */
export interface CaseStatusChange {
  workspaceId: string;
  caseId: string;
  status: string;
  note: string | null;
  actor: string;
}

/** The input of a status change of many cases: ids, or the list's filters (at most `max` cases). */
export interface BulkStatusChange {
  workspaceId: string;
  caseIds?: string[];
  filter?: ListFilters;
  max: number;
  status: string;
  note: string | null;
  actor: string;
}

/**
 * Cases and findings as the HTTP edge reads and changes them (docs/cases.md), bound once to the
 * pool so routes never see it. Each method is the store function of the same meaning; ids of
 * another workspace are null (or match nothing) exactly as there.
 */
export interface CaseService {
  /** A page of the workspace's cases (`listCases`). */
  list(
    workspaceId: string,
    q: ListFilters & { limit: number; cursor?: string; sort?: CaseSort },
  ): Promise<Page<Case>>;
  /** One case of the workspace, null when it has none of that id. */
  get(workspaceId: string, id: string): Promise<Case | null>;
  /** One case of the workspace with its detail ({@link CaseService.detailOf}), null when it has none of that id. */
  detail(
    workspaceId: string,
    id: string,
    evidenceLimit?: number,
    triageHistoryLimit?: number,
  ): Promise<{ case: Case; detail: CaseDetail } | null>;
  /** A case of the workspace: its first evidence page, status history and first triage history page (`caseDetail`). */
  detailOf(
    workspaceId: string,
    c: Pick<Case, 'id' | 'fingerprint'>,
    evidenceLimit?: number,
    triageHistoryLimit?: number,
  ): Promise<CaseDetail>;
  /** A case's sightings, newest first, a page at a time; null when the workspace has no such case. */
  evidence(
    workspaceId: string,
    caseId: string,
    q: { limit: number; cursor?: string },
  ): Promise<Page<Evidence> | null>;
  /** A case's triage history, newest first, a page at a time; null when the workspace has no such case. */
  triageHistory(
    workspaceId: string,
    caseId: string,
    q: { limit: number; cursor?: string },
  ): Promise<Page<CaseTriageHistoryEntry> | null>;
  /** Changes one case's status with a history entry; null when the case is not in the workspace. */
  changeStatus(input: CaseStatusChange): Promise<Case | null>;
  /**
   * Un-marks a duplicate, for good (`unmarkDuplicate`); false when the case is not in the
   * workspace.
   */
  unmarkDuplicate(input: Omit<CaseStatusChange, 'status'>): Promise<boolean>;
  /** One status change applied to many cases ({@link changeStatusOfCases}). */
  changeStatusOfMany(input: BulkStatusChange): Promise<BulkStatusResult>;
  /** Cases of the filters by severity and by triage priority. */
  counts(workspaceId: string, filter: ListFilters): Promise<CaseCounts>;
  /** The dashboard's figures: open cases, open KEV cases, new cases per day over `days`. */
  dashboard(workspaceId: string, now: Date, days: number): Promise<CaseDashboard>;
  /** A page of the workspace's findings, optionally of one case. */
  findings(
    workspaceId: string,
    q: ListFilters & { caseId?: string; limit: number; cursor?: string },
  ): Promise<Page<StoredFinding>>;
  /** One finding of the workspace, null when it has none of that id. */
  finding(workspaceId: string, id: string): Promise<StoredFinding | null>;
}

/**
 * The case service over `pool`: plain delegation to the cases area's stores. SLA states are read
 * at `clock()` (docs/cases.md#due-dates-and-sla).
 */
export function createCaseService(pool: Pool, clock: () => Date = () => new Date()): CaseService {
  return {
    list: (workspaceId, q) => listCases(pool, workspaceId, { ...q, now: clock() }),
    get: (workspaceId, id) => getCase(pool, workspaceId, id, clock()),
    async detail(workspaceId, id, evidenceLimit, triageHistoryLimit) {
      const c = await getCase(pool, workspaceId, id, clock());
      return c
        ? { case: c, detail: await caseDetail(pool, workspaceId, c, evidenceLimit, triageHistoryLimit) }
        : null;
    },
    detailOf: (workspaceId, c, evidenceLimit, triageHistoryLimit) =>
      caseDetail(pool, workspaceId, c, evidenceLimit, triageHistoryLimit),
    async evidence(workspaceId, caseId, q) {
      const c = await getCase(pool, workspaceId, caseId);
      return c ? listCaseEvidence(pool, { workspaceId, fingerprint: c.fingerprint }, q) : null;
    },
    async triageHistory(workspaceId, caseId, q) {
      const c = await getCase(pool, workspaceId, caseId);
      return c ? listCaseTriageHistory(pool, { workspaceId, caseId: c.id }, q) : null;
    },
    changeStatus: (input) => changeCaseStatus(pool, input, clock()),
    changeStatusOfMany: (input) => changeStatusOfCases(pool, input),
    unmarkDuplicate: (input) => unmarkDuplicate(pool, input),
    counts: (workspaceId, filter) => countCases(pool, workspaceId, { ...filter, now: clock() }),
    dashboard: (workspaceId, now, days) => caseDashboard(pool, workspaceId, now, days),
    findings: (workspaceId, q) => listFindings(pool, workspaceId, { ...q, now: clock() }),
    finding: (workspaceId, id) => getFinding(pool, workspaceId, id),
  };
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
 * One status change (with its note and actor) applied to many cases, each through
 * {@link changeCaseStatus}, so each case gets its own history entry exactly as a single PATCH
 * would write it. `filter` selects cases with the list's own query, at most `max` of them.
 */
export async function changeStatusOfCases(pool: Pool, input: BulkStatusChange): Promise<BulkStatusResult> {
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
