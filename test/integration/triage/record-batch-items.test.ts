import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { createBatch } from '../../../src/domain/triage/batch-store.js';
import { recordBatchItems, type BatchItemRecord } from '../../../src/domain/triage/triage-store.js';

/**
 * The statement that stores a group of answered batch items (group commit): each item exactly
 * once, each batch's counters moved by its items, one finisher per batch, and the ledger and
 * shadow rows of exactly the items recorded.
 */
describe('recordBatchItems', () => {
  let t: TestApp;
  let ws: { workspaceId: string; keyId: string };

  beforeAll(async () => {
    t = await startTestApp();
    ws = await signUp(t.app);
  });
  afterAll(async () => t.close());

  async function batch(total: number): Promise<string> {
    const reserved = await t.deps.quota.reserve(ws.workspaceId, total, 1_000, 60_000);
    if (!reserved.ok) throw new Error('no quota');
    return createBatch(t.infra.pool, {
      workspaceId: ws.workspaceId,
      keyId: ws.keyId,
      items: Array.from({ length: total }, (_, i) => ({ title: `f${i}`, severity: 'LOW' }) as never),
      reservationId: reserved.reservation.id,
      webhookUrl: null,
      webhookKeySealed: null,
      at: new Date(),
    });
  }

  function record(batchId: string, index: number, withShadow = true): BatchItemRecord {
    return {
      resultId: randomUUID(),
      workspaceId: ws.workspaceId,
      keyId: ws.keyId,
      model: 'local:ssvc-2.0.3',
      priority: 'LOW',
      response: { priority: 'LOW', index },
      hops: [],
      policyChanges: [],
      policyVersion: 'test',
      at: new Date(),
      ledger: [
        {
          workspaceId: ws.workspaceId,
          keyId: ws.keyId,
          requestId: `batch:${batchId}:${index}`,
          tier: 'routine',
          catalogModel: 'svc-triage-routine',
          providerModel: 'local',
          inputTokens: 100 + index,
          outputTokens: 10,
          costPicos: 1234n,
          aiCall: true,
        },
      ],
      shadow: withShadow
        ? { engine: 'inhouse', modelVersion: 'v1', answer: { priority: 'LOW' }, agrees: true }
        : null,
      settle: { batchId, index },
    };
  }

  it('stores a group across two batches once, counts each batch, and names one finisher per finished batch', async () => {
    const a = await batch(3);
    const b = await batch(4);
    const first = await recordBatchItems(t.infra.pool, [record(a, 0), record(b, 0), record(a, 1, false)]);
    expect(first).toEqual([
      { recorded: true, finished: false },
      { recorded: true, finished: false },
      { recorded: true, finished: false },
    ]);
    // The second group repeats a recorded item (a retried job), and the same item twice.
    const second = await recordBatchItems(t.infra.pool, [
      record(a, 1),
      record(a, 2),
      record(b, 1),
      record(b, 1),
      record(b, 2),
    ]);
    expect([second[0]!.recorded, second[1]!.recorded, second[4]!.recorded]).toEqual([false, true, true]);
    expect([second[2]!.recorded, second[3]!.recorded].filter(Boolean)).toHaveLength(1); // b:1 stored once
    expect(second[1]).toEqual({ recorded: true, finished: true }); // a is complete: 3 of 3
    expect(second.filter((o) => o.finished)).toHaveLength(1); // b has 3 of 4

    const counts = await t.infra.pool.query(
      `SELECT id, completed, failed, status FROM triage_batches WHERE id = ANY($1) ORDER BY total`,
      [[a, b]],
    );
    expect(counts.rows).toEqual([
      { id: a, completed: 3, failed: 0, status: 'running' },
      { id: b, completed: 3, failed: 0, status: 'running' },
    ]);
    const rows = await t.infra.pool.query(
      `SELECT (SELECT count(*) FROM triage_results WHERE batch_id = ANY($1))::int AS results,
              (SELECT count(*) FROM usage_ledger WHERE request_id LIKE 'batch:%')::int AS ledger,
              (SELECT count(*) FROM triage_shadow_answers)::int AS shadow,
              (SELECT count(*) FROM triage_batch_items WHERE batch_id = ANY($1) AND status = 'completed')::int AS items`,
      [[a, b]],
    );
    expect(rows.rows[0]).toEqual({ results: 6, ledger: 6, shadow: 5, items: 6 });

    const last = await recordBatchItems(t.infra.pool, [record(b, 3)]);
    expect(last).toEqual([{ recorded: true, finished: true }]);
  });

  it('writes nothing when the statement fails', async () => {
    const a = await batch(2);
    const bad = { ...record(a, 1), resultId: 'not-a-uuid' };
    await expect(recordBatchItems(t.infra.pool, [record(a, 0), bad])).rejects.toThrow();
    const r = await t.infra.pool.query(`SELECT completed FROM triage_batches WHERE id = $1`, [a]);
    expect(r.rows[0].completed).toBe(0);
  });
});
