import type { Pool } from '../../db/pool.js';
import type { Page } from '../../lib/cursor.js';
import type { ListFilters } from './list-filters.js';
import type { Case } from './case.js';
import type { CaseSort } from './case-sort.js';
import {
  changeOwnerOfMany,
  changeStatusOfCases,
  editCase,
  type BulkOwnerInput,
  type BulkStatusChange,
  type BulkStatusResult,
  type CaseEdit,
  type CaseRules,
} from './case-edit.js';
import type { BulkOwnerResult } from './case-owner-store.js';
import { getSlaPolicy } from './sla-policy-store.js';
import {
  caseDashboard,
  caseDetail,
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
import type { CaseChangeDeliveries } from './case-deliveries.js';

export type { BulkStatusChange, BulkStatusResult, BulkOwnerInput, CaseEdit };
export type { BulkOwnerResult };

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
  /**
   * Changes one case's status, owner and tags under the rules of `case-edit.ts` (a 422 problem
   * when one is broken); null when the case is not in the workspace.
   */
  edit(input: CaseEdit): Promise<{ case: Case; statusChanged: boolean } | null>;
  /**
   * Un-marks a duplicate, for good (`unmarkDuplicate`); false when the case is not in the
   * workspace.
   */
  unmarkDuplicate(input: {
    workspaceId: string;
    caseId: string;
    note: string | null;
    actor: string;
  }): Promise<boolean>;
  /** One status change applied to many cases ({@link changeStatusOfCases}). */
  changeStatusOfMany(input: BulkStatusChange): Promise<BulkStatusResult>;
  /** One owner and tags change applied to many cases ({@link changeOwnerOfMany}). */
  changeOwnerOfMany(input: BulkOwnerInput): Promise<BulkOwnerResult>;
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
 * The case service over `pool`: plain delegation to the cases area's stores; the changes people
 * make record their workflow deliveries through `deliveries` in their own transactions. SLA states are read
 * at `clock()` (docs/cases.md#due-dates-and-sla); `clock` and `maxAcceptanceDays` are what the
 * rules of a risk acceptance are checked against.
 */
export function createCaseService<R>(
  pool: Pool,
  deliveries: CaseChangeDeliveries<R>,
  clock: () => Date = () => new Date(),
  maxAcceptanceDays: (workspaceId: string) => Promise<number> = async (workspaceId) =>
    (await getSlaPolicy(pool, workspaceId)).maxAcceptanceDays,
): CaseService {
  const rules = async (workspaceId: string): Promise<CaseRules> => ({
    now: clock(),
    maxAcceptanceDays: await maxAcceptanceDays(workspaceId),
  });
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
    edit: async (input) => editCase(pool, input, await rules(input.workspaceId), deliveries),
    changeStatusOfMany: async (input) =>
      changeStatusOfCases(pool, input, await rules(input.workspaceId), deliveries),
    changeOwnerOfMany: (input) => changeOwnerOfMany(pool, input, deliveries),
    unmarkDuplicate: (input) => unmarkDuplicate(pool, input),
    counts: (workspaceId, filter) => countCases(pool, workspaceId, { ...filter, now: clock() }),
    dashboard: (workspaceId, now, days) => caseDashboard(pool, workspaceId, now, days),
    findings: (workspaceId, q) => listFindings(pool, workspaceId, { ...q, now: clock() }),
    finding: (workspaceId, id) => getFinding(pool, workspaceId, id),
  };
}
