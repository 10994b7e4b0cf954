import { randomUUID } from 'node:crypto';
import type { Pool } from '../../db/pool.js';
import { invalidRequest, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { effectivePlan, type PlanCatalog } from '../plans/plans.js';
import type { QuotaService } from '../usage/quota.js';
import type { TriageResponse } from '../triage-engine/types.js';
import {
  scanCaseCandidates,
  selectedCaseCandidates,
  type CaseRisk,
  type CaseSelection,
} from '../cases/case-candidates.js';
import { CASE_SELECTION_MAX } from '../cases/case-selection.js';
import { caseRequestSources } from '../cases/case-triage-source.js';
import { createCaseBatch, recordScanTriageWithoutBatch, scanForTriage } from './case-batch-store.js';
import { deleteBatch } from './batch-store.js';
import { riskiestFirst } from './case-risk.js';
import { caseTriageRequest } from './case-triage-request.js';
import { quotaRefusal } from './quota-refusal.js';
import type { TriageCaller, TriageService } from './triage-service.js';

/**
 * Case triage (docs/cases.md#case-triage): the triage of a scan's cases after it completes (upload
 * option `triage=new|all`), a batch over selected cases (`POST /api/v1/cases/triage`), and one
 * case at once (`POST /api/v1/cases/:id/triage`). Every answer goes through the triage service
 * (same router, providers, safety policy, billing) and is stored as the case's triage.
 *
 * Quota first: a batch reserves the AI calls it needs up front, or as many as are left; when
 * fewer are left than cases were asked for, the riskiest cases (`case-risk.ts`) get them and
 * the rest are reported `skippedForQuota`. Nothing ever passes the monthly limit.
 */

/** How long a case batch's reservation lives if its process dies before settling it (as batches). */
const RESERVATION_TTL_MS = 24 * 3_600_000;

/** What accepting a case batch did. `batchId` is null when no case was selected. */
export interface AcceptedCaseBatch {
  batchId: string | null;
  /** Cases selected. */
  requested: number;
  /** Cases triaged: the batch's items. */
  total: number;
  skippedForQuota: number;
}

export interface CaseTriageService {
  /**
   * The triage a completed scan asked for, chosen, reserved, stored and enqueued once (a second
   * call for the same scan only enqueues its items again: job ids make that harmless). Nothing
   * when the scan asked for none, is not completed, or has no key left to bill.
   */
  triageScan(scanId: string): Promise<void>;
  /** `POST /api/v1/cases/triage`: a batch over the selected cases, riskiest first within the quota. */
  acceptCaseBatch(caller: TriageCaller, selection: CaseSelection): Promise<AcceptedCaseBatch>;
  /** `POST /api/v1/cases/:id/triage`: one case, answered and stored synchronously (404 for another workspace's). */
  triageCase(caller: TriageCaller, caseId: string): Promise<TriageResponse>;
}

export interface CaseTriageDeps {
  db: Pool;
  quota: QuotaService;
  triage: Pick<TriageService, 'triageOne'>;
  plans: PlanCatalog;
  clock: () => Date;
  /** Enqueues one job per item of a stored batch on the `triage` queue (the jobs layer's producer). */
  enqueueBatchItems(batchId: string, total: number): Promise<void>;
}

export function createCaseTriageService(deps: CaseTriageDeps): CaseTriageService {
  /** Reserves up to `wanted` calls: as many as the month has left. */
  async function reserveUpTo(workspaceId: string, wanted: number, limit: number) {
    if (wanted === 0) return null;
    const r = await deps.quota.reserveUpTo(workspaceId, {
      atMost: wanted,
      limit,
      spread: 1,
      ttlMs: RESERVATION_TTL_MS,
    });
    return r.ok ? r.reservation : null;
  }

  /** Builds, stores and enqueues the batch of `chosen`; undoes the reservation when it is not stored. */
  async function startBatch(input: {
    batchId: string;
    workspaceId: string;
    keyId: string;
    reservationId: string;
    chosen: readonly CaseRisk[];
    scan: { id: string; requested: number; skipped: number } | null;
  }): Promise<boolean> {
    const ids = input.chosen.map((c) => c.id);
    const sources = await caseRequestSources(deps.db, input.workspaceId, ids, input.scan?.id ?? null);
    let stored = false;
    try {
      stored = await createCaseBatch(deps.db, {
        id: input.batchId,
        workspaceId: input.workspaceId,
        keyId: input.keyId,
        items: sources.map((s) => ({ caseId: s.id, request: caseTriageRequest(s) })),
        reservationId: input.reservationId,
        at: deps.clock(),
        scan: input.scan,
      });
    } finally {
      if (!stored) await deps.quota.release(input.reservationId).catch(() => undefined);
    }
    if (!stored) return false;
    try {
      await deps.enqueueBatchItems(input.batchId, sources.length);
    } catch (err) {
      // A scan's batch is its job's work: the retried job enqueues it again (triageScan). A
      // request's batch that was not queued is withdrawn, as a triage batch is, so its 503
      // leaves nothing stored and nothing reserved.
      if (!input.scan) {
        await deps.quota.release(input.reservationId).catch(() => undefined);
        await deleteBatch(deps.db, input.batchId).catch(() => undefined);
      }
      throw err;
    }
    return true;
  }

  return {
    async triageScan(scanId) {
      const scan = await scanForTriage(deps.db, scanId);
      if (!scan || scan.mode === 'none' || scan.status !== 'completed') return;
      if (scan.requested !== null) {
        // Accepted by an earlier attempt, which may have died before enqueuing.
        if (scan.requested - (scan.skipped ?? 0) > 0)
          await deps.enqueueBatchItems(scan.id, scan.requested - (scan.skipped ?? 0));
        return;
      }
      const candidates = await scanCaseCandidates(deps.db, scan, scan.mode);
      const limit = effectivePlan(scan.workspace, deps.plans, deps.clock()).limits.aiCallsPerMonth;
      // A scan whose uploading key is gone bills nobody: its cases are all skipped.
      const reservation = scan.keyId ? await reserveUpTo(scan.workspaceId, candidates.length, limit) : null;
      const { triage, skipped } = riskiestFirst(candidates, reservation?.amount ?? 0);
      const counts = { id: scan.id, requested: candidates.length, skipped: skipped.length };
      if (!reservation || triage.length === 0) {
        await recordScanTriageWithoutBatch(deps.db, scan.id, counts);
        return;
      }
      await startBatch({
        batchId: scan.id,
        workspaceId: scan.workspaceId,
        keyId: scan.keyId!,
        reservationId: reservation.id,
        chosen: triage,
        scan: counts,
      });
    },

    async acceptCaseBatch(caller, selection) {
      const candidates = await selectedCaseCandidates(
        deps.db,
        caller.workspaceId,
        selection,
        CASE_SELECTION_MAX,
      );
      if (candidates.length > CASE_SELECTION_MAX) {
        throw invalidRequest([
          { path: '', message: `selects more than ${CASE_SELECTION_MAX} cases; narrow the filters` },
        ]);
      }
      if (candidates.length === 0) return { batchId: null, requested: 0, total: 0, skippedForQuota: 0 };
      const reservation = await reserveUpTo(caller.workspaceId, candidates.length, caller.aiCallLimit);
      // Not even one call is left: nothing would be triaged, so the request is refused.
      if (!reservation) throw quotaRefusal(deps.clock(), caller.aiCallLimit);
      const { triage, skipped } = riskiestFirst(candidates, reservation.amount);
      const batchId = randomUUID();
      await startBatch({
        batchId,
        workspaceId: caller.workspaceId,
        keyId: caller.keyId,
        reservationId: reservation.id,
        chosen: triage,
        scan: null,
      });
      return {
        batchId,
        requested: candidates.length,
        total: triage.length,
        skippedForQuota: skipped.length,
      };
    },

    async triageCase(caller, caseId) {
      if (!isUuid(caseId)) throw notFound('case');
      const [source] = await caseRequestSources(deps.db, caller.workspaceId, [caseId], null);
      if (!source) throw notFound('case');
      return deps.triage.triageOne(caller, caseTriageRequest(source), { caseId });
    },
  };
}
