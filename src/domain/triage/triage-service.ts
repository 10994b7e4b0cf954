/**
 * The triage use cases behind `POST /api/v1/triage` and the batch routes (docs/triage.md,
 * docs/triage.md#billing). Routes and the batch worker see only {@link TriageService}.
 *
 * Glossary:
 * - **caller**: the workspace and key a request is made with, and its plan's limits;
 * - **AI call**: the unit of the monthly quota; one per answered request or batch item;
 * - **prompt**: the finding and its enrichment as the models read it, built and counted once
 *   per request by the engine (`triage-engine/prompt.ts`);
 * - **settlement**: how a stored answer's AI call is accounted for (`triage-store.ts`).
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from '../../db/pool.js';
import type { ModelCatalogEntry } from '../../lib/config.js';
import { AppError, invalidRequest } from '../../lib/errors.js';
import type { EnrichmentLookup } from '../enrichment/types.js';
import { monthOf } from '../plans/plans.js';
import type { QuotaService } from '../usage/quota.js';
import { createAiCallLeases, type AiCallLeases } from '../usage/ai-call-leases.js';
import { sealSecret } from '../keys/key-secrets.js';
import { routeTriage, type RouteTriageResult } from '../triage-engine/router.js';
import { buildPrompt } from '../triage-engine/prompt.js';
import { SAFETY_POLICY_VERSION } from '../triage-engine/safety-policy.js';
import type { RouterThresholds } from '../triage-engine/triage-config.js';
import type {
  ChainTier,
  EnrichmentMap,
  Priority,
  Prompt,
  Provider,
  TriageRequest,
  TriageResponse,
} from '../triage-engine/types.js';
import { answeredHopIndex, ledgerRowsFor } from './billing.js';
import { createCoalescer } from '../../lib/coalescer.js';
import { encodeCursor, seqCursor } from '../../lib/cursor.js';
import {
  recordBatchItemsAndCases,
  recordCaseAnswer,
  recordTriageGroup,
  recordUnanswered,
  type BatchItemRecord,
  type RecordOutcome,
  type SingleRecord,
  type TriageRecord,
} from './triage-store.js';
import {
  createBatch,
  deleteBatch,
  findBatch,
  itemsPage,
  type BatchItemView,
  type BatchRow,
} from './batch-store.js';
import { quotaRefusal } from './quota-refusal.js';
import { ModelsBusyError } from './models-busy.js';
import { NO_CASE_DELIVERIES, type CaseChangeDeliveries } from '../cases/case-deliveries.js';
import {
  batchRequestErrors,
  triageRequestErrors,
  type BatchTriageRequest,
  type WebhookHostRules,
} from './triage-requests.js';
import { webhookSigningKey } from './webhook.js';
import type { Logger } from '../../lib/logger.js';

/** A second engine whose answers are stored beside the served one, never returned (docs/triage.md#in-house-model). */
export interface ShadowEngine {
  engine: string;
  modelVersion: string;
  answer(request: TriageRequest, enrichment: EnrichmentMap): { priority: Priority } & Record<string, unknown>;
}

export interface TriageCaller {
  workspaceId: string;
  keyId: string;
  requestId: string;
  /** The plan's monthly AI-call limit (docs/api.md#plans-and-quotas). */
  aiCallLimit: number;
}

/** Who submits a batch: a caller, its plan's batch size, and the key its webhook is signed from. */
export interface BatchCaller extends TriageCaller {
  /** The plan's largest batch (docs/api.md#plans-and-quotas). */
  batchMaxItems: number;
  /** The API key the batch was submitted with: its webhook's signing key derives from it (docs/triage.md#batch-webhooks). */
  apiKeySecret: string;
}

/** A batch accepted for processing: stored, its AI calls reserved, one job per item enqueued. */
export interface AcceptedBatch {
  batchId: string;
  total: number;
}

/** What an answer is for besides its caller: a case stores it as its triage (docs/cases.md#triage-on-a-case). */
export interface TriageTarget {
  caseId: string;
}

/** What running one batch item did (see `RecordOutcome`). */
export type BatchItemOutcome = { response: TriageResponse } & RecordOutcome;

/** The triage service: all a route or the batch worker may ask of triage. */
export interface TriageService {
  /**
   * `POST /api/v1/triage`: one AI call, answered synchronously. Throws `AppError`s:
   * `invalid_request`, `payload_too_large`, `monthly_limit_exceeded`, `triage_unavailable`.
   */
  triageOne(caller: TriageCaller, request: TriageRequest, target?: TriageTarget): Promise<TriageResponse>;
  /**
   * `POST /api/v1/triage/batch`: checks the batch (plan size, CVEs or description, webhook
   * host, input tokens of every item), reserves its AI calls, stores it and enqueues its items;
   * if a step fails, what the earlier steps did is undone (docs/triage.md#batch-triage).
   */
  acceptBatch(caller: BatchCaller, batch: BatchTriageRequest): Promise<AcceptedBatch>;
  /**
   * Routes and records one item of a stored batch, whose AI call its batch reserved. Recorded
   * only if still queued, so an item whose job runs again after a crash is stored and billed once.
   */
  runBatchItem(
    caller: TriageCaller,
    request: TriageRequest,
    item: { batchId: string; index: number; caseId?: string | null },
  ): Promise<BatchItemOutcome>;
  /**
   * `GET /api/v1/triage/batch/:id`: a batch of the caller's workspace with one page of its items
   * in index order, from `cursor`; null when the workspace has no such batch (checked before the
   * cursor, so an unknown batch is a 404 whatever the cursor). Throws `invalid_cursor`.
   */
  batchStatus(
    workspaceId: string,
    batchId: string,
    page: { cursor?: string | undefined; limit: number },
  ): Promise<BatchStatus | null>;
  /** Gives the AI calls this process holds but has not used back to their month. */
  close(): Promise<void>;
}

/** A stored batch and one page of its items. */
export interface BatchStatus {
  batch: BatchRow;
  items: BatchItemView[];
  /** The cursor of the next page; null on the last one. */
  nextCursor: string | null;
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
  /** Enqueues one job per item of a stored batch (the jobs layer's producer). */
  enqueueBatchItems(batchId: string, total: number): Promise<void>;
  /** Server secret (KEY_PEPPER) sealing each batch's webhook signing key at rest. */
  pepper: string;
  /** Which webhook hosts are accepted. @defaultValue public https hosts only */
  webhooks?: WebhookHostRules;
  shadow?: ShadowEngine | null;
  /**
   * Longest a request may spend walking the chain: its signal aborts the hop in flight, so every
   * per-hop timeout fits inside it (TRIAGE_DEADLINE_MS). @defaultValue 20 s
   */
  deadlineMs?: number;
  /** Most batch items stored by one statement (group commit). @defaultValue 64 */
  itemsPerCommit?: number;
  /** Where single requests to remote providers take their AI call. @defaultValue leases of `quota` */
  leases?: AiCallLeases;
  /** Told when the hops of an unanswered request could not be kept (the caller still gets its 503). */
  logger?: Pick<Logger, 'warn'>;
  /** Told of every routed request, answered or not (Prometheus metrics). @defaultValue none */
  observer?: TriageObserver;
  /**
   * The `case.triaged` deliveries of the cases an answer triages (case triage, one case or a
   * batch item), recorded in the transaction that stores the answer and queued after it
   * commits: mapped workflows whose rules select on priority hear of them
   * (docs/workflows.md#when-deliveries-happen). @defaultValue none (no workflow is told)
   */
  caseDeliveries?: CaseChangeDeliveries;
}

/** Sees each request's walk of the chain: its hops, who answered, or that none could. */
export interface TriageObserver {
  routed(result: RouteTriageResult): void;
}

/** How long a batch's reservation lives if its process dies before settling it. */
const BATCH_RESERVATION_TTL_MS = 24 * 3_600_000;

/**
 * One triage, end to end (docs/triage.md, docs/triage.md#billing): enrichment, the input-size check against
 * the catalog `max`, one AI call reserved from the monthly quota, routing, then the ledger
 * rows and the stored result in one transaction, and the reservation committed. A request
 * that gets no answer releases its reservation and is not billed; its hops are kept apart for
 * our own cost accounting (`recordUnanswered` of triage-store.ts).
 */
export function createTriageService(deps: TriageServiceDeps): TriageService {
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

  const caseDeliveries = deps.caseDeliveries ?? NO_CASE_DELIVERIES;
  /** After the commit (`queue` never rejects: a queue that is down leaves them to the sweep). */
  async function queueCaseDeliveries(recorded: readonly unknown[]): Promise<void> {
    for (const r of recorded) await caseDeliveries.queue(r);
  }

  // Batch items answered while an earlier group is being stored go together in the next one.
  const batchItems = createCoalescer(
    async (records: BatchItemRecord[]) => {
      const { outcomes, recorded } = await recordBatchItemsAndCases(deps.db, records, caseDeliveries);
      await queueCaseDeliveries(recorded);
      return outcomes;
    },
    { maxItems: deps.itemsPerCommit ?? 64 },
  );

  // Single answers stored while an earlier group is being stored go together in the next one;
  // one at a time when idle (the statement it always was). Case answers keep their transaction.
  const singleAnswers = createCoalescer((records: SingleRecord[]) => recordTriageGroup(deps.db, records), {
    maxItems: deps.itemsPerCommit ?? 64,
  });

  /** The request's prompt, counted once; 413 when it is more input tokens than the catalog `max` (docs/triage.md#model-catalog). */
  function sizedPrompt(request: TriageRequest, enrichment: EnrichmentMap): Prompt {
    const prompt = buildPrompt(request, enrichment);
    if (prompt.inputTokens > maxInputTokens) {
      throw new AppError(
        'payload_too_large',
        `The finding is ${prompt.inputTokens} input tokens; the model accepts at most ${maxInputTokens}.`,
      );
    }
    return prompt;
  }

  /** The request's enrichment and its prompt, checked for size. */
  async function prepare(request: TriageRequest): Promise<{ enrichment: EnrichmentMap; prompt: Prompt }> {
    const enrichment = await deps.lookup(request.cveIds ?? []);
    return { enrichment, prompt: sizedPrompt(request, enrichment) };
  }

  /**
   * Checks the input tokens of every item of a batch with one enrichment lookup for all their
   * CVEs; a failing item is reported by its index.
   */
  async function checkBatchSizes(items: readonly TriageRequest[]): Promise<void> {
    const enrichment = await deps.lookup(items.flatMap((i) => i.cveIds ?? []));
    items.forEach((item, i) => {
      try {
        sizedPrompt(item, enrichment);
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
    { enrichment, prompt }: { enrichment: EnrichmentMap; prompt: Prompt },
  ): Promise<{ response: TriageResponse; record: Omit<TriageRecord, 'settle'> }> {
    // A controller and a timer cleared when the route ends: `AbortSignal.timeout` cost ~40 µs a
    // request here (a weak reference and a timer kept until it fires).
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), deps.deadlineMs ?? 20_000);
    const clock = { now: () => deps.clock().getTime() };
    let routed: Awaited<ReturnType<typeof routeTriage>>;
    try {
      routed = await routeTriage({
        request,
        enrichment,
        prompt,
        providers: deps.providers,
        chain: deps.chain,
        thresholds: deps.thresholds,
        clock,
        signal: deadline.signal,
      });
    } finally {
      clearTimeout(timer);
    }
    deps.observer?.routed(routed);
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
      // Every tier was out of capacity (docs/operations.md#failure-behaviour): a client can act on when to come back.
      if (routed.error.code === 'overloaded') throw new ModelsBusyError(routed.error.retryAfterMs ?? 1_000);
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
   * Held (from a lease) before any provider outside this process is called; with in-process
   * providers only, taken when the answer is stored (a request past the limit is answered 429
   * and its answer dropped, unbilled).
   */
  async function triageOne(
    caller: TriageCaller,
    request: TriageRequest,
    target?: TriageTarget,
  ): Promise<TriageResponse> {
    const errors = triageRequestErrors(request);
    if (errors.length > 0) throw invalidRequest(errors);
    const prepared = await prepare(request);
    /** The answer, stored (with its case's triage when it has a target) and its AI call settled. */
    const store = async (r: SingleRecord) => {
      if (!target) return singleAnswers.submit(r);
      const { outcome, recorded } = await recordCaseAnswer(deps.db, r, target.caseId, caseDeliveries);
      await queueCaseDeliveries(recorded);
      return outcome;
    };
    if (inProcessOnly) {
      const { response, record } = await answer(caller, request, prepared);
      const take = { limit: caller.aiCallLimit, month: monthOf(deps.clock()) };
      if (!(await store({ ...record, settle: { take } })).recorded) {
        throw quotaRefusal(deps.clock(), caller.aiCallLimit);
      }
      return response;
    }
    const call = await leases.take(caller.workspaceId, caller.aiCallLimit);
    if (!call) throw quotaRefusal(deps.clock(), caller.aiCallLimit);
    let answered;
    try {
      answered = await answer(caller, request, prepared);
    } catch (err) {
      call.giveBack(); // no answer: the call was never counted
      throw err;
    }
    try {
      await store({ ...answered.record, settle: { reservationId: call.reservationId } });
    } catch (err) {
      call.abandon(); // the statement may have counted it before the failure reached us
      throw err;
    }
    return answered.response;
  }

  /**
   * Check, reserve, store, enqueue. Invariant: a batch that is not accepted leaves nothing
   * behind — no reservation, no stored batch (its items go with it) — so a failure to enqueue
   * undoes the two steps before it. Enqueuing twice is harmless (job ids derive from the batch).
   */
  async function acceptBatch(caller: BatchCaller, batch: BatchTriageRequest): Promise<AcceptedBatch> {
    const errors = batchRequestErrors(batch, caller.batchMaxItems, deps.webhooks);
    if (errors.length > 0) throw invalidRequest(errors);
    const { items, webhookUrl } = batch;
    await checkBatchSizes(items);
    const reserved = await deps.quota.reserve(
      caller.workspaceId,
      items.length,
      caller.aiCallLimit,
      BATCH_RESERVATION_TTL_MS,
    );
    if (!reserved.ok) {
      const remaining = Math.max(0, reserved.limit - reserved.used - reserved.reserved);
      throw quotaRefusal(deps.clock(), caller.aiCallLimit, { asked: items.length, remaining });
    }
    const batchId = randomUUID();
    try {
      await createBatch(deps.db, {
        id: batchId,
        workspaceId: caller.workspaceId,
        keyId: caller.keyId,
        items,
        reservationId: reserved.reservation.id,
        webhookUrl: webhookUrl ?? null,
        webhookKeySealed: webhookUrl
          ? sealSecret(deps.pepper, webhookSigningKey(caller.apiKeySecret, batchId))
          : null,
        at: deps.clock(),
      });
      await deps.enqueueBatchItems(batchId, items.length);
    } catch (err) {
      // Best effort: the error that reaches the caller is the one that stopped the batch.
      await deps.quota.release(reserved.reservation.id).catch(() => undefined);
      await deleteBatch(deps.db, batchId).catch(() => undefined);
      throw err;
    }
    return { batchId, total: items.length };
  }

  return {
    triageOne,
    acceptBatch,

    /** Batch items are group-committed: the items of concurrent jobs are stored by one statement. */
    async runBatchItem(caller, request, item) {
      const { response, record } = await answer(caller, request, await prepare(request));
      return { response, ...(await batchItems.submit({ ...record, settle: item })) };
    },

    async batchStatus(workspaceId, batchId, { cursor, limit }) {
      const batch = await findBatch(deps.db, workspaceId, batchId);
      if (!batch) return null;
      const afterIndex = cursor === undefined ? -1 : Number(seqCursor(cursor));
      const items = await itemsPage(deps.db, batchId, afterIndex, limit);
      const last = items.at(-1);
      const more = last !== undefined && last.index < batch.total - 1;
      return { batch, items, nextCursor: more ? encodeCursor({ s: String(last.index) }) : null };
    },

    close: () => leases.close(),
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
