import { randomUUID } from 'node:crypto';
import type { Db, Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import type { TriageRequest, TriageResponse } from '../triage-engine/types.js';
import type { RecordOutcome } from './triage-store.js';
import { settleReservationCtes } from '../usage/quota-store.js';
import { sql } from '../../db/sql.js';

/**
 * The triage area's batches: `triage_batches` and `triage_batch_items` (answers are
 * triage-store.ts's). Batch triage records (docs/triage.md#batch-triage): a batch row with counters, one row per item. An item
 * moves from `queued` to `completed` or `failed` exactly once (guarded updates), and the
 * batch counters move in the same transaction, so retried jobs neither lose nor repeat work.
 */
export type BatchStatus = 'queued' | 'running' | 'completed' | 'failed' | 'partial';

export interface BatchRow {
  id: string;
  workspaceId: string;
  keyId: string;
  status: BatchStatus;
  total: number;
  completed: number;
  failed: number;
  reservationId: string | null;
  webhookUrl: string | null;
  webhookKeySealed: string | null;
  webhookStatus: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

function toBatch(r: Record<string, unknown>): BatchRow {
  return {
    id: r.id as string,
    workspaceId: r.workspace_id as string,
    keyId: r.key_id as string,
    status: r.status as BatchStatus,
    total: r.total as number,
    completed: r.completed as number,
    failed: r.failed as number,
    reservationId: r.reservation_id as string | null,
    webhookUrl: r.webhook_url as string | null,
    webhookKeySealed: r.webhook_key_sealed as string | null,
    webhookStatus: r.webhook_status as string | null,
    createdAt: r.created_at as Date,
    finishedAt: r.finished_at as Date | null,
  };
}

export async function createBatch(
  db: Pool,
  input: {
    id?: string;
    workspaceId: string;
    keyId: string;
    items: readonly TriageRequest[];
    reservationId: string;
    webhookUrl: string | null;
    webhookKeySealed: string | null;
    at: Date;
  },
): Promise<string> {
  const id = input.id ?? randomUUID();
  await withTransaction(db, async (tx) => {
    await tx.query(
      sql`INSERT INTO triage_batches (id, workspace_id, key_id, status, total, reservation_id, webhook_url,
                                      webhook_key_sealed, created_at)
          VALUES (${id}, ${input.workspaceId}, ${input.keyId}, 'queued', ${input.items.length}, ${input.reservationId},
                  ${input.webhookUrl}, ${input.webhookKeySealed}, ${input.at})`,
    );
    await tx.query(
      sql`INSERT INTO triage_batch_items (batch_id, index, status, request)
          SELECT ${id}, i - 1, 'queued', r
            FROM unnest(${input.items.map((item) => JSON.stringify(item))}::jsonb[]) WITH ORDINALITY AS t(r, i)`,
    );
  });
  return id;
}

/**
 * Removes a batch whose acceptance failed after it was stored (its items go with it, ON DELETE
 * CASCADE): the compensation of `acceptBatch` when enqueuing its items failed.
 */
export async function deleteBatch(db: Db, batchId: string): Promise<void> {
  await db.query(sql`DELETE FROM triage_batches WHERE id = ${batchId}`);
}

export async function findBatch(db: Db, workspaceId: string, batchId: string): Promise<BatchRow | null> {
  const res = await db.query(
    sql`SELECT * FROM triage_batches WHERE id = ${batchId} AND workspace_id = ${workspaceId}`,
  );
  return res.rows[0] ? toBatch(res.rows[0]) : null;
}

/** The indexes of a batch's items still `queued`, in order (the maintenance sweep probes their jobs). */
export async function queuedItemIndexes(db: Db, batchId: string): Promise<number[]> {
  const res = await db.query<{ index: number }>(
    sql`SELECT index FROM triage_batch_items WHERE batch_id = ${batchId} AND status = 'queued' ORDER BY index`,
  );
  return res.rows.map((r) => r.index);
}

/**
 * For the maintenance sweep, oldest first: batches still unfinished that were created before
 * `before`, or finished ones whose webhook has been `pending` since before `before`.
 */
export async function staleBatches(
  db: Db,
  which: 'unfinished' | 'webhook_pending',
  before: Date,
  limit: number,
): Promise<BatchRow[]> {
  const res = await db.query(
    which === 'unfinished'
      ? sql`SELECT * FROM triage_batches WHERE finished_at IS NULL AND created_at < ${before}
             ORDER BY created_at LIMIT ${limit}`
      : sql`SELECT * FROM triage_batches WHERE webhook_status = 'pending' AND finished_at < ${before}
             ORDER BY finished_at LIMIT ${limit}`,
  );
  return res.rows.map(toBatch);
}

/** An item with its batch; `caseId` names the case it triages (case triage, docs/cases.md#triage-on-a-case), else null. */
export type LoadedItem = {
  batch: BatchRow;
  status: string;
  request: TriageRequest;
  caseId: string | null;
} | null;

/** One item with its batch; null when missing. */
export async function loadItem(db: Db, batchId: string, index: number): Promise<LoadedItem> {
  return (await loadItems(db, [{ batchId, index }]))[0]!;
}

/** `loadItem` for many items in one query (one result per key, in order; null when missing). */
export async function loadItems(
  db: Db,
  keys: readonly { batchId: string; index: number }[],
): Promise<LoadedItem[]> {
  const res = await db.query(
    sql`SELECT k.ord, b.*, i.status AS item_status, i.request, i.case_id AS item_case_id
          FROM unnest(${keys.map((k) => k.batchId)}::uuid[], ${keys.map((k) => k.index)}::int[])
               WITH ORDINALITY AS k(batch_id, index, ord)
          JOIN triage_batch_items i ON i.batch_id = k.batch_id AND i.index = k.index
          JOIN triage_batches b ON b.id = i.batch_id`,
  );
  const out: LoadedItem[] = keys.map(() => null);
  for (const r of res.rows)
    out[Number(r.ord) - 1] = {
      batch: toBatch(r),
      status: r.item_status as string,
      request: r.request as TriageRequest,
      caseId: (r.item_case_id as string | null) ?? null,
    };
  return out;
}

/**
 * Records that an item got no answer (its error) and counts it as failed, in one statement,
 * only if the item is still queued. Answered items are recorded with their result, ledger and
 * counters by `recordBatchItems` (triage-store.ts) instead.
 */
export async function recordItemError(
  db: Db,
  batchId: string,
  index: number,
  error: { code: string; detail: string },
  at: Date,
): Promise<RecordOutcome> {
  const res = await db.query<{ completed: number; failed: number; total: number }>(
    sql`WITH item AS (
       UPDATE triage_batch_items SET status = 'failed', error = ${JSON.stringify(error)}, finished_at = ${at}
        WHERE batch_id = ${batchId} AND index = ${index} AND status = 'queued'
       RETURNING batch_id
     )
     UPDATE triage_batches SET failed = failed + 1,
            status = CASE WHEN status = 'queued' THEN 'running' ELSE status END
      WHERE id = ${batchId} AND EXISTS (SELECT 1 FROM item)
      RETURNING completed, failed, total`,
  );
  const c = res.rows[0];
  if (!c) return { recorded: false, finished: false };
  return { recorded: true, finished: c.completed + c.failed === c.total };
}

/**
 * Finishes a batch whose every item is recorded, once: sets its final status and, in the same
 * statement, settles its quota reservation (the answered items become used, the rest goes
 * back), and marks its webhook `pending` when it has one. Returns the batch only to the caller
 * that finished it. Atomic, so a process that dies right after never leaves answered items
 * uncounted; whoever calls it again (a retried job) finds the batch finished or finishes it.
 */
export async function finishBatch(db: Db, batchId: string, at: Date): Promise<BatchRow | null> {
  const settle = settleReservationCtes({
    reservation: sql`(SELECT reservation_id FROM b)`,
    count: sql`NULL::int`,
    used: sql`LEAST(q_r.n, (SELECT completed FROM b))`,
  });
  const res = await db.query({
    name: 'finish-batch',
    ...sql`WITH b AS (
       UPDATE triage_batches
          SET status = CASE WHEN failed = 0 THEN 'completed' WHEN completed = 0 THEN 'failed' ELSE 'partial' END,
              finished_at = ${at},
              webhook_status = CASE WHEN webhook_url IS NOT NULL THEN 'pending' ELSE webhook_status END
        WHERE id = ${batchId} AND completed + failed = total AND finished_at IS NULL
        RETURNING *
     ), ${settle}
     SELECT * FROM b`,
  });
  return res.rows[0] ? toBatch(res.rows[0]) : null;
}

export async function setWebhookStatus(db: Db, batchId: string, status: string): Promise<void> {
  await db.query(sql`UPDATE triage_batches SET webhook_status = ${status} WHERE id = ${batchId}`);
}

export interface BatchItemView {
  index: number;
  status: string;
  result?: TriageResponse;
  error?: { code: string; detail: string };
}

/** One page of items after `afterIndex`, in index order. */
export async function itemsPage(
  db: Db,
  batchId: string,
  afterIndex: number,
  limit: number,
): Promise<BatchItemView[]> {
  const res = await db.query(
    sql`SELECT index, status, result, error FROM triage_batch_items
         WHERE batch_id = ${batchId} AND index > ${afterIndex} ORDER BY index LIMIT ${limit}`,
  );
  return res.rows.map((r) => ({
    index: r.index,
    status: r.status,
    ...(r.result ? { result: r.result } : {}),
    ...(r.error ? { error: r.error } : {}),
  }));
}
