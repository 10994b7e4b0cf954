import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { DAY } from '../../helpers/clock.js';
import { createQuotaService, type QuotaService } from '../../../src/domain/usage/quota.js';
import {
  createAiCallLeases,
  leaseSize,
  type AiCallLeaseOptions,
  type LeasedCall,
} from '../../../src/domain/usage/ai-call-leases.js';
import { runMaintenance } from '../../../src/domain/maintenance.js';
import { monthOf } from '../../../src/domain/plans/plans.js';

/**
 * AI-call leases against the real quota tables: a process reserves a few calls at once and
 * hands them out locally; `used + reserved <= limit` always; a call is counted used only when
 * settled (here `quota.commit(id, 1)`, the same CTEs as the statement that stores an answer).
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

async function counter(workspaceId: string) {
  const res = await t.infra.pool.query(
    `SELECT used, reserved, (SELECT count(*)::int FROM quota_reservations r WHERE r.workspace_id = q.workspace_id) AS rows
       FROM ai_call_quota q WHERE workspace_id = $1 AND month = $2`,
    [workspaceId, monthOf(t.clock())],
  );
  return res.rows[0] as { used: number; reserved: number; rows: number };
}

/** A quota service that counts its reservations and their sizes: one per round trip. */
function countingQuota(): QuotaService & { leases: number[] } {
  const inner = createQuotaService(t.infra.pool, t.clock);
  const leases: number[] = [];
  return {
    ...inner,
    leases,
    async reserveUpTo(workspaceId, opts) {
      const r = await inner.reserveUpTo(workspaceId, opts);
      if (r.ok) leases.push(r.reservation.amount);
      return r;
    },
  };
}

function leasesOf(quota: QuotaService, options: Partial<AiCallLeaseOptions> = {}) {
  return createAiCallLeases(quota, { clock: t.clock, ...options });
}

/** The next lease reserved when a quarter of the current one is left, whatever the pace. */
const quarter = (size: number) => (size < 4 ? 0 : Math.floor(size / 4));

/** A quota service whose reservations each wait until the test lets them through. */
function gatedQuota() {
  const inner = createQuotaService(t.infra.pool, t.clock);
  const gates: (() => void)[] = [];
  const state = { started: 0, landed: 0 };
  const quota: QuotaService = {
    ...inner,
    async reserveUpTo(id, opts) {
      state.started++;
      await new Promise<void>((go) => gates.push(go));
      const r = await inner.reserveUpTo(id, opts);
      state.landed++;
      return r;
    },
  };
  const landed = async (n: number) => {
    while (state.landed < n) await new Promise((r) => setTimeout(r, 5));
  };
  return { quota, gates, state, landed };
}

describe('AI-call leases', () => {
  it('sizes a lease from the monthly limit: one call under 2,000 a month, 25 at 50,000', () => {
    expect([100, 1_999, 2_000, 10_000, 50_000, 1_000_000].map((limit) => leaseSize(limit))).toEqual([
      1, 1, 1, 5, 25, 25,
    ]);
    expect(leaseSize(50_000, 1)).toBe(1); // AI_CALL_LEASE_MAX=1: a reservation per request
  });

  it('hands out a lease of 25 calls for one reservation, and counts only the settled ones', async () => {
    const { workspaceId } = await signUp(t.app);
    const quota = countingQuota();
    const leases = leasesOf(quota, { refillAt: quarter });
    const calls = [];
    for (let i = 0; i < 60; i++) calls.push((await leases.take(workspaceId, 50_000))!);
    expect(quota.leases).toEqual([25, 25, 25]);
    expect(new Set(calls.map((c) => c.reservationId)).size).toBe(3);
    expect(await counter(workspaceId)).toEqual({ used: 0, reserved: 75, rows: 3 });

    for (const c of calls.slice(0, 30)) await quota.commit(c.reservationId, 1);
    expect(await counter(workspaceId)).toEqual({ used: 30, reserved: 45, rows: 2 }); // the first lease is spent

    await leases.close(); // the third lease's 15 calls never handed out go back
    expect(await counter(workspaceId)).toEqual({ used: 30, reserved: 30, rows: 2 });
    for (const c of calls.slice(30)) await quota.commit(c.reservationId, 1);
    expect(await counter(workspaceId)).toEqual({ used: 60, reserved: 0, rows: 0 });
  });

  it('lets concurrent requests of a process share one reservation', async () => {
    const { workspaceId } = await signUp(t.app);
    const quota = countingQuota();
    const leases = leasesOf(quota, { refillAt: quarter });
    // 40: the second lease keeps more than a quarter, so no third is reserved ahead.
    const calls = await Promise.all(Array.from({ length: 40 }, () => leases.take(workspaceId, 50_000)));
    expect(calls.every((c) => c !== null)).toBe(true);
    expect(quota.leases).toEqual([25, 25]);
    await leases.close();
  });

  it('reserves the next lease while the last quarter of the current one is handed out', async () => {
    const { workspaceId } = await signUp(t.app);
    // Each reservation waits until the test lets it through, so none can land unseen.
    const { quota, gates, state } = gatedQuota();
    const leases = leasesOf(quota, { refillAt: quarter });
    const first = leases.take(workspaceId, 50_000);
    gates.shift()!();
    const calls = [(await first)!];
    for (let i = 1; i < 18; i++) calls.push((await leases.take(workspaceId, 50_000))!);
    expect(state.started).toBe(1); // 7 of 25 left: more than a quarter
    calls.push((await leases.take(workspaceId, 50_000))!);
    expect(state.started).toBe(2); // 6 left: the next lease is reserved now, ahead of need
    gates.shift()!();
    while (state.landed < 2) await new Promise((r) => setTimeout(r, 5));

    // The rest of the first lease, then the next one: no take waits for a reservation.
    for (let i = 0; i < 7; i++) calls.push((await leases.take(workspaceId, 50_000))!);
    expect(state.started).toBe(2);
    const ids = [...new Set(calls.map((c) => c.reservationId))];
    expect(ids).toHaveLength(2);
    expect(calls.filter((c) => c.reservationId === ids[0])).toHaveLength(25);
    expect(await counter(workspaceId)).toEqual({ used: 0, reserved: 50, rows: 2 });

    await leases.close(); // the second lease's 24 calls not handed out go back
    expect(await counter(workspaceId)).toEqual({ used: 0, reserved: 26, rows: 2 });
  });

  it('reserves the next lease earlier when calls go faster than a reservation lands, and settles each call once', async () => {
    const { workspaceId } = await signUp(t.app);
    const { quota, gates, state, landed } = gatedQuota();
    let ms = 0; // the leases' monotonic clock, moved by hand
    const leases = leasesOf(quota, { now: () => ms });
    const calls: LeasedCall[] = [];
    const take = async () => calls.push((await leases.take(workspaceId, 50_000))!);

    // The first lease: no pace known yet, so the next one is reserved at a quarter left (6).
    const first = take();
    gates.shift()!(); // it lands at once
    await first;
    for (let i = 2; i <= 24; i++) {
      ms = i - 1;
      await take();
    }
    expect(state.started).toBe(2); // at the 19th call
    ms = 25;
    await take(); // 25 calls in 25 ms: one a millisecond
    ms = 28;
    gates.shift()!(); // the second reservation took 10 ms (started at 18)
    await landed(2);

    // The second lease: 2 × 1 call/ms × 10 ms = 20 calls left start the third reservation.
    for (let i = 0; i < 4; i++) await take();
    expect(state.started).toBe(2); // 21 left
    await take();
    expect(state.started).toBe(3); // 20 left
    gates.shift()!();
    await landed(3);
    for (let i = 0; i < 20; i++) await take(); // the rest of the second lease
    expect(state.started).toBe(3);
    expect(calls).toHaveLength(50);
    expect(new Set(calls.map((c) => c.reservationId)).size).toBe(2);

    // Every call handed out is settled once; the third lease, never handed out from, goes back.
    for (const c of calls) await quota.commit(c.reservationId, 1);
    await leases.close();
    expect(await counter(workspaceId)).toEqual({ used: calls.length, reserved: 0, rows: 0 });
  });

  it('shrinks leases as the month fills and gives exactly the limit, then null', async () => {
    const { workspaceId } = await signUp(t.app);
    const quota = countingQuota();
    const leases = leasesOf(quota, { size: () => 25 });
    let taken = 0;
    for (;;) {
      const c = await leases.take(workspaceId, 100);
      if (!c) break;
      await quota.commit(c.reservationId, 1);
      taken += 1;
    }
    expect(taken).toBe(100);
    // An eighth of what is left at most: 100/8 = 12, then 88/8 = 11, ... down to one call.
    expect(quota.leases.slice(0, 3)).toEqual([12, 11, 9]);
    expect(quota.leases.at(-1)).toBe(1);
    expect(quota.leases.reduce((a, b) => a + b, 0)).toBe(100);
    expect(await counter(workspaceId)).toEqual({ used: 100, reserved: 0, rows: 0 });
  });

  it('never passes the limit across two processes, and loses no call once they close', async () => {
    const { workspaceId } = await signUp(t.app);
    const quotaA = countingQuota();
    const quotaB = countingQuota();
    const a = leasesOf(quotaA, { size: () => 10 });
    const b = leasesOf(quotaB, { size: () => 10 });
    const takeMany = async (leases: typeof a, n: number) =>
      (await Promise.all(Array.from({ length: n }, () => leases.take(workspaceId, 40)))).filter(
        (c) => c !== null,
      );
    const [gotA, gotB] = await Promise.all([takeMany(a, 30), takeMany(b, 30)]);
    expect(gotA.length + gotB.length).toBeLessThanOrEqual(40);
    const { used, reserved } = await counter(workspaceId);
    expect(used + reserved).toBeLessThanOrEqual(40);
    for (const c of [...gotA, ...gotB]) await quotaA.commit(c.reservationId, 1);
    await Promise.all([a.close(), b.close()]);
    expect(await counter(workspaceId)).toMatchObject({ used: gotA.length + gotB.length, reserved: 0 });
    // What one process held unused is not lost: the month gives exactly the rest.
    const rest = await takeMany(leasesOf(createQuotaService(t.infra.pool, t.clock)), 60);
    expect(gotA.length + gotB.length + rest.length).toBe(40);
  });

  it('takes a call given back again; an abandoned call retires its lease', async () => {
    const { workspaceId } = await signUp(t.app);
    const quota = countingQuota();
    const leases = leasesOf(quota, { size: () => 5 });
    const first = (await leases.take(workspaceId, 1_000))!;
    const second = (await leases.take(workspaceId, 1_000))!;
    first.giveBack();
    for (let i = 0; i < 4; i++)
      expect((await leases.take(workspaceId, 1_000))!.reservationId).toBe(first.reservationId);
    expect(quota.leases).toEqual([5]);

    second.abandon(); // nothing left to give back; the lease must not hand out another call
    const third = (await leases.take(workspaceId, 1_000))!;
    expect(third.reservationId).not.toBe(first.reservationId);
    expect(quota.leases).toEqual([5, 5]);
    await leases.close();
    // Five calls of the first lease are still held (handed out, never settled), one of the second.
    expect(await counter(workspaceId)).toMatchObject({ used: 0, reserved: 6 });
  });

  it('retires a lease after its time, at the end of the month and when the limit falls', async () => {
    const { workspaceId } = await signUp(t.app);
    const quota = countingQuota();
    const leases = leasesOf(quota, { size: () => 10 });
    const a = (await leases.take(workspaceId, 1_000))!;
    await quota.commit(a.reservationId, 1);

    t.clock.advance(61_000);
    const b = (await leases.take(workspaceId, 1_000))!;
    expect(b.reservationId).not.toBe(a.reservationId);

    const c = (await leases.take(workspaceId, 500))!; // the plan's limit fell
    expect(c.reservationId).not.toBe(b.reservationId);

    t.clock.advance(32 * DAY);
    const d = (await leases.take(workspaceId, 500))!;
    expect(d.reservationId).not.toBe(c.reservationId);
    await leases.close();
    // This month: only d is held. The retired leases gave back all they had not handed out.
    expect(await counter(workspaceId)).toMatchObject({ used: 0, reserved: 1 });
    const earlier = await t.infra.pool.query(
      `SELECT sum(used)::int AS used, sum(reserved)::int AS reserved FROM ai_call_quota WHERE workspace_id = $1`,
      [workspaceId],
    );
    expect(earlier.rows[0]).toEqual({ used: 1, reserved: 3 }); // b, c (handed out) and d
  });

  it('leaves the calls of a process that died held until its reservation expires', async () => {
    const { workspaceId } = await signUp(t.app);
    const quota = createQuotaService(t.infra.pool, t.clock);
    const leases = leasesOf(quota, { size: () => 10, ttlMs: 120_000 });
    await leases.take(workspaceId, 1_000); // and the process dies: no close()
    expect(await counter(workspaceId)).toMatchObject({ reserved: 10 });
    t.clock.advance(121_000);
    const report = await runMaintenance({ db: t.infra.pool, quota, bus: t.infra.bus, clock: t.clock });
    expect(report.reservationsReleased).toBeGreaterThanOrEqual(10);
    expect(await counter(workspaceId)).toEqual({ used: 0, reserved: 0, rows: 0 });
  });
});
