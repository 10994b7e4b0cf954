import { randomUUID } from 'node:crypto';
import type { Pool } from '../../db/pool.js';
import type { ModelCatalogEntry } from '../../lib/config.js';
import { AppError } from '../../lib/errors.js';
import type { EnrichmentLookup } from '../enrichment/types.js';
import { monthOf, nextMonthStart } from '../plans/plans.js';
import { rateLimitHeaders } from '../usage/rate-limiter.js';
import type { QuotaService } from '../usage/quota.js';
import { createAiCallLeases, type AiCallLeases } from '../usage/ai-call-leases.js';
import { routeTriage } from '../triage-engine/router.js';
import { promptTokens } from '../triage-engine/providers/prompt.js';
import { SAFETY_POLICY_VERSION } from '../triage-engine/safety-policy.js';
import type { RouterThresholds } from '../triage-engine/triage-config.js';
import type {
  ChainTier,
  EnrichmentMap,
  Priority,
  Provider,
  TriageRequest,
  TriageResponse,
} from '../triage-engine/types.js';
import { answeredHopIndex, ledgerRowsFor } from './billing.js';
import { createCoalescer } from '../../lib/coalescer.js';
import {
  recordBatchItems,
  recordTriage,
  type BatchItemRecord,
  type RecordOutcome,
  type TriageRecord,
} from './record-triage.js';
import { recordUnanswered } from './record-unanswered.js';
import type { Logger } from '../../lib/logger.js';

/** A second engine whose answers are stored beside the served one, never returned (DECISIONS §6). */
export interface ShadowEngine {
  engine: string;
  modelVersion: string;
  answer(request: TriageRequest, enrichment: EnrichmentMap): { priority: Priority } & Record<string, unknown>;
}

export interface TriageCaller {
  workspaceId: string;
  keyId: string;
  requestId: string;
  /** The plan's monthly AI-call limit (DECISIONS §3). */
  aiCallLimit: number;
}

export interface TriageServiceDeps {
  db: Pool;
  quota: QuotaService;
  lookup: EnrichmentLookup;
  providers: Readonly<Record<string, Provider>>;
  chain: readonly ChainTier[];
  thresholds: RouterThresholds;
  catalog: readonly ModelCatalogEntry[];
  clock: () => Date;
  shadow?: ShadowEngine | null;
  /** Longest a request may spend walking the chain. @defaultValue 60 s */
  deadlineMs?: number;
  /** Most batch items stored by one statement (group commit). @defaultValue 64 */
  itemsPerCommit?: number;
  /** Where single requests to remote providers take their AI call. @defaultValue leases of `quota` */
  leases?: AiCallLeases;
  /** Told when the hops of an unanswered request could not be kept (the caller still gets its 503). */
  logger?: Pick<Logger, 'warn'>;
}

/**
 * One triage, end to end (DECISIONS §3, §5, §6): enrichment, the input-size check against
 * the catalog `max`, one AI call reserved from the monthly quota, routing, then the ledger
 * rows and the stored result in one transaction, and the reservation committed. A request
 * that gets no answer releases its reservation and is not billed; its hops are kept apart for
 * our own cost accounting (`record-unanswered.ts`).
 */
export function createTriageService(deps: TriageServiceDeps) {
  // The chain may escalate to any of its tiers, so the strictest `max` among them applies.
  const maxInputTokens = Math.min(
    ...deps.chain.map((t) => deps.catalog.find((m) => m.id === t.billedAs)?.max ?? Number.POSITIVE_INFINITY),
  );

  // Every provider of the chain answers in this process: nothing is spent before the answer is
  // stored, so a single request takes its AI call in the statement that stores it (one round
  // trip) instead of reserving it first (two).
  const inProcessOnly = deps.chain.every((t) => deps.providers[t.provider]?.inProcess === true);
  // Otherwise the call is held before the provider is paid, from a lease of a few calls
  // reserved at once (a round trip per lease, not per request).
  const leases = deps.leases ?? createAiCallLeases(deps.quota, { clock: deps.clock });

  // Batch items answered while an earlier group is being stored go together in the next one.
  const batchItems = createCoalescer((records: BatchItemRecord[]) => recordBatchItems(deps.db, records), {
    maxItems: deps.itemsPerCommit ?? 64,
  });

  function quotaError(limit: number): AppError {
    const now = deps.clock();
    const resetMs = nextMonthStart(now).getTime() - now.getTime();
    return new AppError(
      'monthly_limit_exceeded',
      `This workspace has used its ${limit} AI calls for this month.`,
      {
        headers: rateLimitHeaders({ allowed: false, limit, remaining: 0, resetMs }),
      },
    );
  }

  /** 413 when the request is more input tokens than the catalog `max` (DECISIONS §6). */
  function checkSize(request: TriageRequest, enrichment: EnrichmentMap): void {
    const tokens = promptTokens({ request, enrichment, model: deps.chain[0]?.model ?? 'local' });
    if (tokens > maxInputTokens) {
      throw new AppError(
        'payload_too_large',
        `The finding is ${tokens} input tokens; the model accepts at most ${maxInputTokens}.`,
      );
    }
  }

  /** Checks the request's size in tokens; returns its enrichment. */
  async function prepare(request: TriageRequest): Promise<EnrichmentMap> {
    const enrichment = await deps.lookup(request.cveIds ?? []);
    checkSize(request, enrichment);
    return enrichment;
  }

  /**
   * Checks every item of a batch with one enrichment lookup for all their CVEs; a failing item
   * is reported by its index.
   */
  async function checkBatch(items: readonly TriageRequest[]): Promise<void> {
    const enrichment = await deps.lookup(items.flatMap((i) => i.cveIds ?? []));
    items.forEach((item, i) => {
      try {
        checkSize(item, enrichment);
      } catch (err) {
        if (err instanceof AppError) throw new AppError(err.code, `Item ${i}: ${err.detail}`);
        throw err;
      }
    });
  }

  /** Routes one request through the chain; the answer and what to store for it. */
  async function answer(
    caller: TriageCaller,
    request: TriageRequest,
    enrichment: EnrichmentMap,
  ): Promise<{ response: TriageResponse; record: Omit<TriageRecord, 'settle'> }> {
    const signal = AbortSignal.timeout(deps.deadlineMs ?? 60_000);
    const clock = { now: () => deps.clock().getTime() };
    const routed = await routeTriage({
      request,
      enrichment,
      providers: deps.providers,
      chain: deps.chain,
      thresholds: deps.thresholds,
      clock,
      signal,
    });
    if (!routed.ok) {
      // Tokens spent on answers we could not use are our cost, not the caller's: kept apart
      // from the ledger, so the request is neither billed nor counted as an AI call.
      // Best effort: losing this row costs our accounting, not the caller's answer (a 503 stays a 503).
      if (routed.hops.length > 0) {
        await recordUnanswered(deps.db, {
          workspaceId: caller.workspaceId,
          keyId: caller.keyId,
          requestId: caller.requestId,
          hops: routed.hops,
          at: deps.clock(),
        }).catch((err: unknown) =>
          deps.logger?.warn(
            { err: (err as Error)?.message, requestId: caller.requestId },
            'could not record the hops of an unanswered triage request',
          ),
        );
      }
      throw new AppError(
        'triage_unavailable',
        'No model could answer and no safe answer could be formed from enrichment; retry later.',
      );
    }
    const at = deps.clock();
    const shadow = deps.shadow ? safeShadow(deps.shadow, request, enrichment) : null;
    const record: Omit<TriageRecord, 'settle'> = {
      resultId: randomUUID(),
      workspaceId: caller.workspaceId,
      keyId: caller.keyId,
      model: routed.response.model,
      priority: routed.response.priority,
      response: routed.response,
      hops: routed.hops,
      policyChanges: routed.policyChanges,
      policyVersion: SAFETY_POLICY_VERSION,
      at,
      ledger: ledgerRowsFor({
        workspaceId: caller.workspaceId,
        keyId: caller.keyId,
        requestId: caller.requestId,
        hops: routed.hops,
        catalog: deps.catalog,
        answeredHop: answeredHopIndex(routed.hops, routed.servedBy.tier === 'policy'),
        at,
      }),
      shadow:
        shadow && deps.shadow
          ? {
              engine: deps.shadow.engine,
              modelVersion: deps.shadow.modelVersion,
              answer: shadow,
              agrees: shadow.priority === routed.response.priority,
            }
          : null,
    };
    return { response: routed.response, record };
  }

  /**
   * Routes and records a batch item, whose AI call its batch reserved. It is recorded only if
   * still queued, so an item whose job runs again after a crash is stored and billed once.
   * Batch items are group-committed: the items of concurrent jobs are stored by one statement.
   */
  async function run(
    caller: TriageCaller,
    request: TriageRequest,
    enrichment: EnrichmentMap,
    settle: { batchId: string; index: number },
  ): Promise<{ response: TriageResponse } & RecordOutcome> {
    const { response, record } = await answer(caller, request, enrichment);
    return { response, ...(await batchItems.submit({ ...record, settle })) };
  }

  return {
    maxInputTokens,
    prepare,
    checkBatch,
    run,
    quotaError,

    /** Gives the AI calls this process holds but has not used back to their month. */
    close: () => leases.close(),

    /**
     * `POST /api/v1/triage`: one AI call, answered synchronously. Held (from a lease) before any
     * provider outside this process is called; with in-process providers only, taken when the
     * answer is stored (a request past the limit is answered 429 and its answer dropped, unbilled).
     */
    async triageOne(caller: TriageCaller, request: TriageRequest): Promise<TriageResponse> {
      const enrichment = await prepare(request);
      if (inProcessOnly) {
        const { response, record } = await answer(caller, request, enrichment);
        const take = { limit: caller.aiCallLimit, month: monthOf(deps.clock()) };
        if (!(await recordTriage(deps.db, { ...record, settle: { take } })).recorded) {
          throw quotaError(caller.aiCallLimit);
        }
        return response;
      }
      const call = await leases.take(caller.workspaceId, caller.aiCallLimit);
      if (!call) throw quotaError(caller.aiCallLimit);
      let answered;
      try {
        answered = await answer(caller, request, enrichment);
      } catch (err) {
        call.giveBack(); // no answer: the call was never counted
        throw err;
      }
      try {
        await recordTriage(deps.db, { ...answered.record, settle: { reservationId: call.reservationId } });
      } catch (err) {
        call.abandon(); // the statement may have counted it before the failure reached us
        throw err;
      }
      return answered.response;
    },
  };
}

/** A shadow engine must never break a served request. */
function safeShadow(shadow: ShadowEngine, request: TriageRequest, enrichment: EnrichmentMap) {
  try {
    return shadow.answer(request, enrichment);
  } catch {
    return null;
  }
}

export type TriageService = ReturnType<typeof createTriageService>;
