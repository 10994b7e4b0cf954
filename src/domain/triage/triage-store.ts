import { randomUUID } from 'node:crypto';
import { withTransaction, type Db, type Pool } from '../../db/pool.js';
import { groupBy } from '../../lib/group-by.js';
import { recordCaseTriages, type CaseTriageInput } from '../cases/case-triage-store.js';
import type { CaseChangeDeliveries } from '../cases/case-deliveries.js';
import type { Hop, TriageResponse } from '../triage-engine/types.js';
import type { LedgerEntry } from '../usage/ledger.js';
import { ledgerCallColumns } from '../usage/ledger.js';
import { insertLedgerRowsFrom } from '../usage/ledger-store.js';
import {
  settleReservationCtes,
  settleReservationsCtes,
  takeCallsPerMonth,
  takeOneCall,
} from '../usage/quota-store.js';
import { sql, type SqlFragment } from '../../db/sql.js';

/**
 * The triage area's answers: `triage_results`, `triage_shadow_answers` and `triage_unanswered`
 * (batches and their items are batch-store.ts's). An answer's ledger rows and AI call are written
 * in the same statement through the usage area's fragments (`takeOneCall`, `takeCallsPerMonth`,
 * `insertLedgerRowsFrom`, `settleReservationCtes`, `settleReservationsCtes`), so an answer and its charge commit together.
 */

/**
 * Stores an answered triage in ONE statement, hence one round trip and one commit: the
 * result, its ledger rows, the shadow answer, and the AI call — taken from the request's
 * reservation, or from the month's quota directly (`take`, only while the month's count stays
 * within the limit). Batch items are stored in groups by `recordBatchItems` below. Foreign keys
 * are deferred, so the order of the data-modifying CTEs does not matter.
 */
export interface TriageRecord {
  resultId: string;
  workspaceId: string;
  keyId: string;
  model: string;
  priority: string;
  response: unknown;
  hops: unknown;
  policyChanges: unknown;
  policyVersion: string;
  at: Date;
  ledger: readonly LedgerEntry[];
  shadow: { engine: string; modelVersion: string; answer: unknown; agrees: boolean } | null;
  settle: Settlement;
}

/**
 * How an answer's AI call is accounted for: taken from the request's reservation, taken in the
 * same statement (`take`: only if the month's count stays within `limit`; otherwise nothing is
 * stored and `recorded` is false), or left to its batch (a batch item).
 */
export type Settlement =
  | { reservationId: string }
  | { take: { limit: number; month: string } }
  | { batchId: string; index: number; caseId?: string | null };

export interface RecordOutcome {
  /**
   * False when nothing was written: a batch item another attempt already recorded, or a
   * `take` settlement that would have passed the monthly limit.
   */
  recorded: boolean;
  /** For a batch item: whether it was the last one. */
  finished: boolean;
}

/** A single request's answer: settled from its reservation or taken from the month's quota. */
export type SingleRecord = TriageRecord & {
  settle: { reservationId: string } | { take: { limit: number; month: string } };
};

/** A single request's answer; see {@link TriageRecord}. */
export async function recordTriage(db: Db, r: SingleRecord): Promise<RecordOutcome> {
  const reservationId = 'reservationId' in r.settle ? r.settle.reservationId : null;
  const take = 'take' in r.settle ? r.settle.take : null;
  const limit = sql`${take?.limit ?? null}::int`;
  const settle = settleReservationCtes({
    reservation: sql`${reservationId}::uuid`,
    count: sql`1`,
    used: sql`q_r.n`,
  });
  // The statement's text is the same for every answer (only values vary), so it stays named:
  // PostgreSQL plans it once per connection.
  const res = await db.query<{ recorded: number }>({
    name: 'record-triage',
    ...sql`
WITH take AS (
  ${takeOneCall({ workspaceId: r.workspaceId, month: take?.month ?? null, limit })}
), go AS (
  SELECT 1 AS ok WHERE ${limit} IS NULL OR EXISTS (SELECT 1 FROM take)
), res AS (
  INSERT INTO triage_results (id, workspace_id, key_id, batch_id, model, priority, response, hops, policy_changes, policy_version, created_at)
  SELECT ${r.resultId}::uuid, ${r.workspaceId}::uuid, ${r.keyId}::uuid, NULL, ${r.model}, ${r.priority},
         ${JSON.stringify(r.response)}::jsonb, ${JSON.stringify(r.hops)}::jsonb, ${JSON.stringify(r.policyChanges)}::jsonb,
         ${r.policyVersion}, ${r.at}
    FROM go
), led AS (
  ${insertLedgerRowsFrom(sql`
  SELECT ${r.workspaceId}::uuid, ${r.keyId}::uuid, l.request_id, l.tier, l.catalog_model, l.provider_model,
         l.input_tokens, l.output_tokens, l.cost_micros, l.cost_picos, l.ai_call, ${r.at}
    FROM ${ledgerCalls(r.ledger, null)}
   CROSS JOIN go`)}
), sh AS (
  INSERT INTO triage_shadow_answers (triage_result_id, engine, model_version, answer, agrees)
  SELECT ${r.resultId}::uuid, ${r.shadow?.engine ?? null}, ${r.shadow?.modelVersion ?? null},
         ${r.shadow ? JSON.stringify(r.shadow.answer) : null}::jsonb, ${r.shadow?.agrees ?? null}::boolean
    FROM go WHERE ${r.shadow !== null}::boolean
), ${settle}
SELECT (SELECT count(*) FROM go)::int AS recorded`,
  });
  return { recorded: res.rows[0]!.recorded === 1, finished: false };
}

/**
 * The group commit of single answers (`lib/coalescer.ts`): one answer alone is stored by
 * {@link recordTriage} (an idle server runs exactly the statement it always ran); a group by
 * {@link recordTriages}, whose answers refused there (a month the group's takes would pass) are
 * then stored one by one, in order, so the monthly limit is applied per answer exactly.
 */
export async function recordTriageGroup(db: Db, records: readonly SingleRecord[]): Promise<RecordOutcome[]> {
  if (records.length === 1) return [await recordTriage(db, records[0]!)];
  const outcomes = await recordTriages(db, records);
  for (const [i, o] of outcomes.entries()) {
    if (!o.recorded) outcomes[i] = await recordTriage(db, records[i]!);
  }
  return outcomes;
}

/**
 * Stores many single answers in ONE statement, hence one round trip and one commit: the same
 * rows as {@link recordTriage} for each. Answers settled from reservations are all stored, each
 * reservation settled once by the number of its answers here. Answers that take their AI call
 * are taken per workspace and month all together (only if the month's count stays within the
 * smallest of their limits) or not at all: a month refused stores none of its answers
 * (`recorded: false`) and writes nothing for them. Months are locked in workspace order.
 */
export async function recordTriages(db: Db, records: readonly SingleRecord[]): Promise<RecordOutcome[]> {
  if (records.length === 0) return [];
  const col = <T>(f: (r: SingleRecord, i: number) => T): T[] => records.map(f);
  const take = (r: SingleRecord) => ('take' in r.settle ? r.settle.take : null);
  const reservation = (r: SingleRecord) => ('reservationId' in r.settle ? r.settle.reservationId : null);
  const settle = settleReservationsCtes(
    sql`SELECT reservation_id, count(*)::int FROM u WHERE reservation_id IS NOT NULL GROUP BY reservation_id`,
  );
  const res = await db.query<{ ord: number }>({
    name: 'record-triages',
    ...sql`
WITH u AS (
  SELECT * FROM unnest(${col((_, i) => i)}::int[], ${col((r) => r.resultId)}::uuid[], ${col((r) => r.workspaceId)}::uuid[],
                       ${col((r) => r.keyId)}::uuid[], ${col((r) => r.model)}::text[], ${col((r) => r.priority)}::text[],
                       ${col((r) => JSON.stringify(r.response))}::jsonb[], ${col((r) => JSON.stringify(r.hops))}::jsonb[],
                       ${col((r) => JSON.stringify(r.policyChanges))}::jsonb[], ${col((r) => r.policyVersion)}::text[],
                       ${col((r) => r.at)}::timestamptz[], ${col((r) => r.shadow?.engine ?? null)}::text[],
                       ${col((r) => r.shadow?.modelVersion ?? null)}::text[],
                       ${col((r) => (r.shadow ? JSON.stringify(r.shadow.answer) : null))}::jsonb[],
                       ${col((r) => r.shadow?.agrees ?? null)}::boolean[], ${col(reservation)}::uuid[],
                       ${col((r) => take(r)?.limit ?? null)}::int[], ${col((r) => take(r)?.month ?? null)}::date[])
    AS u(ord, result_id, workspace_id, key_id, model, priority, response, hops, policy_changes, policy_version, at,
         sh_engine, sh_version, sh_answer, sh_agrees, reservation_id, take_limit, take_month)
), tg AS (
  SELECT workspace_id, take_month AS month, min(take_limit) AS lim, count(*)::int AS n
    FROM u WHERE take_limit IS NOT NULL GROUP BY workspace_id, take_month
), take AS (
  ${takeCallsPerMonth(sql`tg`)}
), done AS (
  SELECT u.* FROM u
   WHERE u.take_limit IS NULL
      OR EXISTS (SELECT 1 FROM take t WHERE t.workspace_id = u.workspace_id AND t.month = u.take_month)
), ${answerRowsCtes(records, sql`NULL`)}, ${settle}
SELECT ord FROM done`,
  });
  const recorded = new Set(res.rows.map((row) => row.ord));
  return records.map((_, i) => ({ recorded: recorded.has(i), finished: false }));
}

/** An answered batch item: a `TriageRecord` whose settlement is its batch and index (and its case, if any). */
export type BatchItemRecord = TriageRecord & {
  settle: { batchId: string; index: number; caseId?: string | null };
};

/** The answer of `r` as case `caseId` stores it (its current triage and a history entry). */
export function caseTriageOf(r: TriageRecord, caseId: string): CaseTriageInput {
  const response = r.response as TriageResponse;
  return {
    workspaceId: r.workspaceId,
    caseId,
    keyId: r.keyId,
    resultId: r.resultId,
    answer: {
      priority: response.priority,
      recommendedAction: response.recommendedAction,
      reasoning: response.reasoning,
      confidenceScore: response.confidenceScore,
      severityOverride: response.severityOverride,
      model: response.model,
      triagedAt: response.triagedAt,
      policyVersion: r.policyVersion,
    },
  };
}

/**
 * A single answer for a case (`POST /api/v1/cases/:id/triage`): `recordTriage`, the case's
 * triage (current and history) and its `case.triaged` deliveries (`deliveries.record`) in one
 * transaction, so an answer billed is an answer the case keeps, and the workflows hear of it
 * (docs/workflows.md#when-deliveries-happen). `recorded`: for `deliveries.queue` once committed.
 */
export async function recordCaseAnswer<R>(
  pool: Pool,
  r: Parameters<typeof recordTriage>[1],
  caseId: string,
  deliveries: CaseChangeDeliveries<R>,
): Promise<{ outcome: RecordOutcome; recorded: R[] }> {
  return withTransaction(pool, async (tx) => {
    const outcome = await recordTriage(tx, r);
    if (!outcome.recorded) return { outcome, recorded: [] };
    await recordCaseTriages(tx, [caseTriageOf(r, caseId)]);
    return { outcome, recorded: [await deliveries.record(tx, r.workspaceId, [caseId], 'case.triaged')] };
  });
}

/**
 * The group commit of batch items (`lib/coalescer.ts`): `recordBatchItems`, and for the items
 * that triage a case (case triage, docs/cases.md#triage-on-a-case) and were recorded now, the
 * cases' triage and their `case.triaged` deliveries (one `deliveries.record` per workspace) in
 * the same transaction — a retried job finds its item recorded, its case triaged and the
 * workflows' deliveries stored, or none of them. `recorded`: for `deliveries.queue` once committed.
 */
export async function recordBatchItemsAndCases<R>(
  pool: Pool,
  records: readonly BatchItemRecord[],
  deliveries: CaseChangeDeliveries<R>,
): Promise<{ outcomes: RecordOutcome[]; recorded: R[] }> {
  if (!records.some((r) => r.settle.caseId))
    return { outcomes: await recordBatchItems(pool, records), recorded: [] };
  return withTransaction(pool, async (tx) => {
    const outcomes = await recordBatchItems(tx, records);
    const triaged = records.flatMap((r, i) =>
      outcomes[i]!.recorded && r.settle.caseId ? [caseTriageOf(r, r.settle.caseId)] : [],
    );
    await recordCaseTriages(tx, triaged);
    const byWorkspace = groupBy(
      triaged,
      (c) => c.workspaceId,
      (c) => c.caseId,
    );
    const recorded: R[] = [];
    for (const [workspaceId, caseIds] of byWorkspace)
      recorded.push(await deliveries.record(tx, workspaceId, caseIds, 'case.triaged'));
    return { outcomes, recorded };
  });
}

/**
 * Stores many answered batch items in ONE statement (group commit, `lib/coalescer.ts`):
 * the same rows and guards as `recordTriage` for each item — an item already recorded by an
 * earlier attempt writes nothing and is reported `recorded: false` — with each batch's
 * counters moved once by the number of its items recorded here. Of the items that complete a
 * batch, only the last one in the group is reported `finished`, so one caller finishes it.
 */
export async function recordBatchItems(
  db: Db,
  records: readonly BatchItemRecord[],
): Promise<RecordOutcome[]> {
  if (records.length === 0) return [];
  const col = <T>(f: (r: BatchItemRecord, i: number) => T): T[] => records.map(f);
  const res = await db.query<{
    ord: number;
    recorded: boolean;
    completed: number | null;
    failed: number | null;
    total: number | null;
  }>({
    name: 'record-batch-items',
    ...sql`
WITH u AS (
  SELECT * FROM unnest(${col((_, i) => i)}::int[], ${col((r) => r.resultId)}::uuid[], ${col((r) => r.workspaceId)}::uuid[],
                       ${col((r) => r.keyId)}::uuid[], ${col((r) => r.settle.batchId)}::uuid[], ${col((r) => r.settle.index)}::int[],
                       ${col((r) => r.model)}::text[], ${col((r) => r.priority)}::text[],
                       ${col((r) => JSON.stringify(r.response))}::jsonb[], ${col((r) => JSON.stringify(r.hops))}::jsonb[],
                       ${col((r) => JSON.stringify(r.policyChanges))}::jsonb[], ${col((r) => r.policyVersion)}::text[],
                       ${col((r) => r.at)}::timestamptz[], ${col((r) => r.shadow?.engine ?? null)}::text[],
                       ${col((r) => r.shadow?.modelVersion ?? null)}::text[],
                       ${col((r) => (r.shadow ? JSON.stringify(r.shadow.answer) : null))}::jsonb[],
                       ${col((r) => r.shadow?.agrees ?? null)}::boolean[])
    AS u(ord, result_id, workspace_id, key_id, batch_id, idx, model, priority, response, hops, policy_changes,
         policy_version, at, sh_engine, sh_version, sh_answer, sh_agrees)
), item AS (
  UPDATE triage_batch_items i SET status = 'completed', result = u.response, finished_at = u.at
    FROM u WHERE i.batch_id = u.batch_id AND i.index = u.idx AND i.status = 'queued'
  RETURNING u.ord
), done AS (
  SELECT u.* FROM u JOIN item ON item.ord = u.ord
), counters AS (
  UPDATE triage_batches b SET completed = b.completed + c.n,
         status = CASE WHEN b.status = 'queued' THEN 'running' ELSE b.status END
    FROM (SELECT batch_id, count(*)::int AS n FROM done GROUP BY batch_id) c
   WHERE b.id = c.batch_id
  RETURNING b.id, b.completed, b.failed, b.total
), ${answerRowsCtes(records, sql`batch_id`)}
SELECT u.ord, item.ord IS NOT NULL AS recorded, c.completed, c.failed, c.total
  FROM u LEFT JOIN item ON item.ord = u.ord LEFT JOIN counters c ON c.id = u.batch_id`,
  });
  const outcomes: RecordOutcome[] = records.map(() => ({ recorded: false, finished: false }));
  const finisher = new Map<string, number>(); // batch → the last recorded item that completes it
  for (const row of res.rows) {
    const complete =
      row.total !== null &&
      row.completed !== null &&
      row.failed !== null &&
      row.completed + row.failed === row.total;
    outcomes[row.ord] = { recorded: row.recorded, finished: false };
    if (row.recorded && complete) {
      const batchId = records[row.ord]!.settle.batchId;
      finisher.set(batchId, Math.max(finisher.get(batchId) ?? -1, row.ord));
    }
  }
  for (const ord of finisher.values()) outcomes[ord] = { recorded: true, finished: true };
  return outcomes;
}

/**
 * A request that got no answer (503 `triage_unavailable`) and the hops it made. Providers may
 * have charged us for some of them (a schema-violating answer still used tokens), so they are
 * kept for our own cost accounting — in `triage_unanswered`, never in the usage ledger: the
 * caller is not billed and no AI call is counted (docs/triage.md#billing).
 */
export interface UnansweredRecord {
  workspaceId: string;
  keyId: string;
  /** The HTTP request id, or `batch:<batchId>:<index>` for a batch item. */
  requestId: string;
  hops: readonly Hop[];
  at: Date;
}

/** Stores one unanswered request with its hops and their token totals, in one statement. */
export async function recordUnanswered(db: Db, r: UnansweredRecord): Promise<void> {
  const input = r.hops.reduce((sum, h) => sum + h.inputTokens, 0);
  const output = r.hops.reduce((sum, h) => sum + h.outputTokens, 0);
  await db.query({
    name: 'record-unanswered',
    ...sql`INSERT INTO triage_unanswered (id, workspace_id, key_id, request_id, hops, input_tokens, output_tokens, created_at)
           VALUES (${randomUUID()}, ${r.workspaceId}, ${r.keyId}, ${r.requestId}, ${JSON.stringify(r.hops)}::jsonb,
                   ${input}, ${output}, ${r.at})`,
  });
}

/**
 * The CTEs a group statement ends with, over its CTE `done` (the answers recorded now, with
 * `ord` their index in `records`): their results (`batch` is `NULL` or the `batch_id` column),
 * their ledger rows through the usage store, and their shadow answers.
 */
function answerRowsCtes(records: readonly TriageRecord[], batch: SqlFragment): SqlFragment {
  const ledger = records.flatMap((r, ord) => r.ledger.map((entry) => ({ ord, entry })));
  return sql`res AS (
  INSERT INTO triage_results (id, workspace_id, key_id, batch_id, model, priority, response, hops, policy_changes, policy_version, created_at)
  SELECT result_id, workspace_id, key_id, ${batch}, model, priority, response, hops, policy_changes, policy_version, at FROM done
), led AS (
  ${insertLedgerRowsFrom(sql`
  SELECT d.workspace_id, d.key_id, l.request_id, l.tier, l.catalog_model, l.provider_model,
         l.input_tokens, l.output_tokens, l.cost_micros, l.cost_picos, l.ai_call, d.at
    FROM ${ledgerCalls(
      ledger.map((l) => l.entry),
      ledger.map((l) => l.ord),
    )}
    JOIN done d ON d.ord = l.ord`)}
), sh AS (
  INSERT INTO triage_shadow_answers (triage_result_id, engine, model_version, answer, agrees)
  SELECT result_id, sh_engine, sh_version, sh_answer, sh_agrees FROM done WHERE sh_answer IS NOT NULL
)`;
}

/**
 * Ledger calls as a table `l` (request_id, tier, catalog_model, provider_model, input_tokens,
 * output_tokens, cost_micros, cost_picos, ai_call) over their columns (`ledgerCallColumns`),
 * led by `ord` (the index of each call's answer) when `ords` is given.
 */
function ledgerCalls(entries: readonly LedgerEntry[], ords: readonly number[] | null): SqlFragment {
  const [
    requestIds,
    tiers,
    catalogModels,
    providerModels,
    inputTokens,
    outputTokens,
    costMicros,
    costPicos,
    aiCalls,
  ] = ledgerCallColumns(entries);
  return sql`unnest(${ords ? sql`${[...ords]}::int[], ` : sql.empty}${requestIds}::text[], ${tiers}::text[],
                ${catalogModels}::text[], ${providerModels}::text[], ${inputTokens}::int[], ${outputTokens}::int[],
                ${costMicros}::bigint[], ${costPicos}::bigint[], ${aiCalls}::boolean[])
         AS l(${ords ? sql`ord, ` : sql.empty}request_id, tier, catalog_model, provider_model, input_tokens, output_tokens,
              cost_micros, cost_picos, ai_call)`;
}
