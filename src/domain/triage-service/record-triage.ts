import type { Queryable } from '../../db/pool.js';
import type { LedgerEntry } from '../usage/ledger.js';
import { ledgerCallColumns } from '../usage/ledger.js';
import { settleReservationCtes } from '../usage/quota.js';

/**
 * Stores an answered triage in ONE statement, hence one round trip and one commit: the
 * result, its ledger rows, the shadow answer, and either the AI call taken from the
 * request's reservation (single request) or the batch item and its batch's counters. For a
 * batch item everything is conditional on the item still being `queued`, so an item whose
 * job runs twice is recorded, billed and counted once. Foreign keys are deferred, so the
 * order of the data-modifying CTEs does not matter.
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
  settle: { reservationId: string } | { batchId: string; index: number };
}

export interface RecordOutcome {
  /** False only for a batch item another attempt already recorded (nothing was written). */
  recorded: boolean;
  /** For a batch item: whether it was the last one. */
  finished: boolean;
}

const SQL = `
WITH item AS (
  UPDATE triage_batch_items SET status = 'completed', result = $3::jsonb, finished_at = $9
   WHERE $11::uuid IS NOT NULL AND batch_id = $11::uuid AND index = $12::int AND status = 'queued'
  RETURNING batch_id
), go AS (
  SELECT 1 AS ok WHERE $11::uuid IS NULL OR EXISTS (SELECT 1 FROM item)
), counters AS (
  UPDATE triage_batches SET completed = completed + 1,
         status = CASE WHEN status = 'queued' THEN 'running' ELSE status END
   WHERE id = $11::uuid AND EXISTS (SELECT 1 FROM item)
  RETURNING completed, failed, total
), res AS (
  INSERT INTO triage_results (id, workspace_id, key_id, batch_id, model, priority, response, hops, policy_changes, policy_version, created_at)
  SELECT $1::uuid, $2::uuid, $10::uuid, $11::uuid, $4, $5, $3::jsonb, $6::jsonb, $7::jsonb, $8, $9 FROM go
), led AS (
  INSERT INTO usage_ledger (workspace_id, key_id, request_id, tier, catalog_model, provider_model,
                            input_tokens, output_tokens, cost_micros, cost_picos, ai_call, created_at)
  SELECT $2::uuid, $10::uuid, u.request_id, u.tier, u.catalog_model, u.provider_model,
         u.input_tokens, u.output_tokens, u.cost_micros, u.cost_picos, u.ai_call, $9
    FROM unnest($14::text[], $15::text[], $16::text[], $17::text[], $18::int[], $19::int[], $20::bigint[], $21::bigint[], $22::boolean[])
         AS u(request_id, tier, catalog_model, provider_model, input_tokens, output_tokens, cost_micros, cost_picos, ai_call)
   CROSS JOIN go
), sh AS (
  INSERT INTO triage_shadow_answers (triage_result_id, engine, model_version, answer, agrees)
  SELECT $1::uuid, $23, $24, $25::jsonb, $26 FROM go WHERE $25::jsonb IS NOT NULL
), ${settleReservationCtes({ reservation: '$13::uuid', count: '1', asUsed: 'true' })}
SELECT (SELECT count(*) FROM go)::int AS recorded, c.completed, c.failed, c.total
  FROM (SELECT 1) one LEFT JOIN counters c ON true`;

export async function recordTriage(db: Queryable, r: TriageRecord): Promise<RecordOutcome> {
  const batch = 'batchId' in r.settle ? r.settle : null;
  const reservationId = 'reservationId' in r.settle ? r.settle.reservationId : null;
  const res = await db.query<{ recorded: number; completed: number | null; failed: number | null; total: number | null }>(SQL, [
    r.resultId,
    r.workspaceId,
    JSON.stringify(r.response),
    r.model,
    r.priority,
    JSON.stringify(r.hops),
    JSON.stringify(r.policyChanges),
    r.policyVersion,
    r.at,
    r.keyId,
    batch?.batchId ?? null,
    batch?.index ?? null,
    reservationId,
    ...ledgerCallColumns(r.ledger),
    r.shadow?.engine ?? null,
    r.shadow?.modelVersion ?? null,
    r.shadow ? JSON.stringify(r.shadow.answer) : null,
    r.shadow?.agrees ?? null,
  ]);
  const row = res.rows[0]!;
  const finished = row.total !== null && row.completed !== null && row.failed !== null && row.completed + row.failed === row.total;
  return { recorded: row.recorded === 1, finished };
}
