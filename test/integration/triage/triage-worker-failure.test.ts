import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp } from '../../helpers/test-app.js';
import { testRedisUrl } from '../../helpers/db.js';
import { eventually } from '../../helpers/scan-app.js';
import { startTriageTestWorker, triageCounts } from '../../helpers/triage-setup.js';
import { createBatch } from '../../../src/domain/triage/batch-store.js';
import type { TriageService } from '../../../src/domain/triage/triage-service.js';
import { webhookSigningKey } from '../../../src/domain/triage/webhook.js';
import { sealSecret } from '../../../src/domain/keys/key-secrets.js';
import { enqueueBatchItems, TRIAGE_QUEUE } from '../../../src/jobs/triage-batch.js';

/**
 * The triage worker's `failed` listener through a real BullMQ worker (docs/triage.md#batch-triage): an item
 * whose job fails for good — every attempt spent on an error that is not the item's own — is
 * failed with `internal_error`, so its batch finishes: final status, quota settled (answered
 * items used, the rest back), webhook pending then delivered. An attempt that fails but is
 * retried must not fail its item. The fault is injected: a triage service whose `run` throws a
 * plain (infrastructure) error. Jobs get 2 attempts 200 ms apart instead of 5 from 1 s.
 */
const redisUrl = testRedisUrl();
if (!redisUrl) console.warn('[triage-worker-failure.test] Redis not reachable: the Redis case is SKIPPED.');

const opened: { close(): Promise<void> }[] = [];
const gates: (() => void)[] = [];
afterAll(async () => {
  for (const open of gates) open(); // a held delivery would keep its worker from closing
  for (const o of opened.reverse()) await o.close();
});

const finding = (i: number) => ({
  title: `Weak TLS cipher #${i}`,
  severity: 'LOW' as const,
  description: 'TLS 1.0 enabled on an internal host',
});

describe.each([
  { name: 'PostgreSQL', redis: null as string | null },
  { name: 'Redis', redis: redisUrl || null },
])('a batch item whose job fails for good, on $name', ({ name, redis }) => {
  it.skipIf(name === 'Redis' && !redis)(
    'is failed with internal_error once its attempts are spent, and its batch finishes and settles',
    async () => {
      const t = await startTestApp(redis ? { redisUrl: redis } : {});
      opened.push(t);
      const s = await signUp(t.app, { plan: 'trial' });

      // Item 1 fails on every attempt; item 2 on its first only.
      const attempts = new Map<number, number>();
      const faulty: TriageService = {
        ...t.deps.triage,
        async runBatchItem(caller, request, item) {
          const n = (attempts.get(item.index) ?? 0) + 1;
          attempts.set(item.index, n);
          if (item.index === 1 || (item.index === 2 && n === 1))
            throw new Error('Connection terminated unexpectedly');
          return t.deps.triage.runBatchItem(caller, request, item);
        },
      };
      let openGate!: () => void;
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      gates.push(openGate);
      const deliveries: Record<string, unknown>[] = [];
      opened.push(
        startTriageTestWorker(t, {
          triage: faulty,
          deliver: async (_url, _key, payload) => {
            deliveries.push(payload as Record<string, unknown>);
            await gate;
            return 'delivered';
          },
        }),
      );

      // Accepted as the route accepts a batch: its calls reserved, stored, one job per item.
      const items = [finding(0), finding(1), finding(2)];
      const reserved = await t.deps.quota.reserve(s.workspaceId, items.length, 50_000, 60_000);
      if (!reserved.ok) throw new Error('no quota');
      const batchId = randomUUID();
      await createBatch(t.infra.pool, {
        id: batchId,
        workspaceId: s.workspaceId,
        keyId: s.keyId,
        items,
        reservationId: reserved.reservation.id,
        webhookUrl: 'https://hooks.example.com/triage',
        webhookKeySealed: sealSecret(t.infra.pepper, webhookSigningKey(s.key, batchId)),
        at: t.clock(),
      });
      // 200 ms before a retry: were the listener to fail an item on an attempt that is retried,
      // it would have done so before the retry could answer it.
      await enqueueBatchItems(t.infra.queues, batchId, items.length, { attempts: 2, backoffMs: 200 });

      const batch = async () =>
        (
          await t.infra.pool.query(
            `SELECT status, completed, failed, finished_at IS NOT NULL AS finished, webhook_status
               FROM triage_batches WHERE id = $1`,
            [batchId],
          )
        ).rows[0];
      expect(await eventually(async () => (await batch()).finished, 30_000)).toBe(true);
      expect(await batch()).toEqual({
        status: 'partial',
        completed: 2,
        failed: 1,
        finished: true,
        webhook_status: 'pending',
      });
      expect(Object.fromEntries(attempts)).toEqual({ 0: 1, 1: 2, 2: 2 });
      // Two items answered and counted, the third's call back: the reservation is gone.
      expect(await triageCounts(t, s.workspaceId)).toEqual({
        results: 2,
        calls: 2,
        used: 2,
        reserved: 0,
        reservations: 0,
      });

      openGate();
      expect(await eventually(async () => (await batch()).webhook_status === 'delivered', 10_000)).toBe(true);
      expect(deliveries).toEqual([
        expect.objectContaining({
          type: 'triage.batch.finished',
          batchId,
          status: 'partial',
          total: 3,
          completed: 2,
          failed: 1,
        }),
      ]);

      const view = await t.app.inject({
        method: 'GET',
        url: `/api/v1/triage/batch/${batchId}`,
        headers: { 'x-api-key': s.key },
      });
      expect(view.json()).toMatchObject({ status: 'partial', completed: 2, failed: 1 });
      expect(view.json().items).toEqual([
        { index: 0, status: 'completed', result: expect.objectContaining({ model: expect.any(String) }) },
        {
          index: 1,
          status: 'failed',
          error: { code: 'internal_error', detail: 'This item could not be triaged after several attempts.' },
        },
        { index: 2, status: 'completed', result: expect.objectContaining({ model: expect.any(String) }) },
      ]);
      const jobs = await t.infra.queues.queue(TRIAGE_QUEUE).getJobCounts('completed', 'failed');
      expect(jobs).toEqual({ completed: 2, failed: 1 });
    },
    60_000,
  );
});
