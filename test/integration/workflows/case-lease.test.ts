import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpWorkflowManager, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { withCaseLease } from '../../../src/domain/workflows/case-lease.js';

/**
 * The per-(workflow, case) lease deliveries run under (m019): one attempt at a time, in turn,
 * without a pooled connection held while it works; a busy case answers when to come back; a
 * crashed holder's lease is taken over once it ran out; a holder that lost it is told so.
 */
let t: TestApp;
let workflowId: string;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const checkedOut = () => t.infra.pool.totalCount - t.infra.pool.idleCount;

beforeAll(async () => {
  t = await startTestApp();
  const owner = await signUpWorkflowManager(t.app, { plan: 'trial' });
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/workflows',
    headers: { 'x-api-key': owner.key, 'content-type': 'application/json' },
    payload: JSON.stringify({ name: 'lease', target: { kind: 'webhook', url: 'https://hooks.acme.test/v' } }),
  });
  expect(res.statusCode).toBe(201);
  workflowId = (res.json() as { id: string }).id;
});

afterAll(async () => {
  await t?.close();
});

describe('the case lease', () => {
  it('runs attempts on one case one after the other, holding no connection while they work', async () => {
    const caseId = randomUUID();
    const order: string[] = [];
    let outside = -1;
    const first = withCaseLease(t.infra.pool, workflowId, caseId, async () => {
      order.push('first:start');
      await sleep(300);
      outside = checkedOut();
      order.push('first:end');
    });
    await sleep(50);
    const second = withCaseLease(
      t.infra.pool,
      workflowId,
      caseId,
      async () => {
        order.push('second');
      },
      { waitMs: 3_000 },
    );
    expect(await first).toEqual({ held: true, value: undefined });
    expect(await second).toEqual({ held: true, value: undefined });
    expect(order).toEqual(['first:start', 'first:end', 'second']);
    // While the first "called the target", only the second's polling may briefly use one.
    expect(outside).toBeLessThanOrEqual(1);
    const left = await t.infra.pool.query(
      `SELECT count(*)::int AS n FROM workflow_case_leases WHERE case_id = $1`,
      [caseId],
    );
    expect(left.rows[0].n).toBe(0);
  });

  it('answers when to come back when the case stays busy, and runs nothing', async () => {
    const caseId = randomUUID();
    let ran = false;
    const holder = withCaseLease(t.infra.pool, workflowId, caseId, () => sleep(800));
    await sleep(50);
    const busy = await withCaseLease(
      t.infra.pool,
      workflowId,
      caseId,
      async () => {
        ran = true;
      },
      { waitMs: 100 },
    );
    expect(busy.held).toBe(false);
    expect(ran).toBe(false);
    if (!busy.held) {
      expect(busy.retryAfterMs).toBeGreaterThanOrEqual(250);
      expect(busy.retryAfterMs).toBeLessThanOrEqual(5_000);
    }
    await holder;
  });

  it("takes over a crashed holder's lease once it ran out, and the old holder learns it lost it", async () => {
    const caseId = randomUUID();
    await t.infra.pool.query(
      `INSERT INTO workflow_case_leases (workflow_id, case_id, holder, leased_until)
       VALUES ($1, $2, $3, now() - interval '1 second')`,
      [workflowId, caseId, randomUUID()],
    );
    expect(
      (await withCaseLease(t.infra.pool, workflowId, caseId, async () => 'mine', { waitMs: 0 })).held,
    ).toBe(true);

    let kept: boolean[] = [];
    const slow = withCaseLease(
      t.infra.pool,
      workflowId,
      caseId,
      async (lease) => {
        kept.push(await lease.keep());
        await sleep(400); // stalls past its 100 ms lease
        kept.push(await lease.keep());
      },
      { ttlMs: 100 },
    );
    await sleep(200);
    const took = await withCaseLease(
      t.infra.pool,
      workflowId,
      caseId,
      async () => {
        await sleep(400);
        return (
          await t.infra.pool.query(`SELECT count(*)::int AS n FROM workflow_case_leases WHERE case_id = $1`, [
            caseId,
          ])
        ).rows[0].n as number;
      },
      { waitMs: 0 },
    );
    await slow;
    expect(took).toEqual({ held: true, value: 1 });
    expect(kept).toEqual([true, false]);
    kept = [];
  });
});
