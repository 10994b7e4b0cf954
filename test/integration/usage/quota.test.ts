import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { DAY } from '../../helpers/clock.js';
import { createQuotaService } from '../../../src/domain/usage/quota.js';
import { runMaintenance } from '../../../src/domain/maintenance.js';

const run = promisify(execFile);
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

async function counter(workspaceId: string) {
  const res = await t.infra.pool.query(`SELECT used, reserved FROM ai_call_quota WHERE workspace_id = $1`, [
    workspaceId,
  ]);
  return res.rows[0] as { used: number; reserved: number };
}

describe('monthly AI-call quota', () => {
  it('grants exactly 100 of 200 concurrent reservations against a limit of 100, across two processes', async () => {
    const { workspaceId } = await signUp(t.app);
    const child = () =>
      run(
        'node',
        ['--import', 'tsx', 'test/helpers/quota-child.ts', t.databaseUrl, workspaceId, '100', '100'],
        { timeout: 60_000 },
      );
    const [a, b] = await Promise.all([child(), child()]);
    const granted = [...JSON.parse(a.stdout).granted, ...JSON.parse(b.stdout).granted] as string[];
    expect(granted).toHaveLength(100);
    expect(await counter(workspaceId)).toEqual({ used: 0, reserved: 100 });
    // Settle them concurrently: commit every other one, release the rest.
    const quota = createQuotaService(t.infra.pool, t.clock);
    await Promise.all(granted.map((id, i) => (i % 2 === 0 ? quota.commit(id) : quota.release(id))));
    expect(await counter(workspaceId)).toEqual({ used: 50, reserved: 0 });
  });

  it('reserve, commit part, release the rest', async () => {
    const { workspaceId } = await signUp(t.app);
    const quota = createQuotaService(t.infra.pool, t.clock);
    const r = await quota.reserve(workspaceId, 10, 12);
    expect(r.ok).toBe(true);
    expect(await quota.reserve(workspaceId, 3, 12)).toEqual({ ok: false, used: 0, reserved: 10, limit: 12 });
    if (!r.ok) return;
    await quota.commit(r.reservation.id, 4);
    await quota.release(r.reservation.id, 1);
    expect(await counter(workspaceId)).toEqual({ used: 4, reserved: 5 });
    await quota.commit(r.reservation.id);
    expect(await counter(workspaceId)).toEqual({ used: 9, reserved: 0 });
    // A settled reservation cannot be settled twice.
    await quota.commit(r.reservation.id);
    expect(await counter(workspaceId)).toEqual({ used: 9, reserved: 0 });
  });

  it('gives back the reservations of a process that never settled them', async () => {
    const { workspaceId } = await signUp(t.app);
    const quota = createQuotaService(t.infra.pool, t.clock);
    const r = await quota.reserve(workspaceId, 5, 100, 60_000);
    expect(r.ok).toBe(true);
    t.clock.advance(61_000);
    const report = await runMaintenance({ db: t.infra.pool, quota, bus: t.infra.bus, clock: t.clock });
    expect(report.reservationsReleased).toBeGreaterThanOrEqual(5);
    expect(await counter(workspaceId)).toEqual({ used: 0, reserved: 0 });
  });

  it('counts per calendar month: a new month starts at zero', async () => {
    const { workspaceId } = await signUp(t.app);
    const quota = createQuotaService(t.infra.pool, t.clock);
    const r = await quota.reserve(workspaceId, 2, 2);
    if (r.ok) await quota.commit(r.reservation.id);
    expect((await quota.reserve(workspaceId, 1, 2)).ok).toBe(false);
    t.clock.advance(32 * DAY);
    expect((await quota.reserve(workspaceId, 1, 2)).ok).toBe(true);
  });
});

describe('trial', () => {
  it('a workspace whose trial ended is on free (clock moved, no sleeping), and maintenance records it', async () => {
    const s = await signUp(t.app, { plan: 'trial' });
    const before = await t.app.inject({
      method: 'GET',
      url: '/api/console/workspace',
      headers: { cookie: s.cookie },
    });
    expect(before.json()).toMatchObject({ plan: 'trial', trialDaysLeft: 14, aiCallLimit: 50_000 });
    t.clock.advance(14 * DAY + 1);
    // Sessions last 12 hours: sign in again two weeks later.
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/console/workspace', headers: { cookie: s.cookie } }))
        .statusCode,
    ).toBe(401);
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/console/login',
      payload: { email: s.email, password: s.password },
    });
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const after = await t.app.inject({ method: 'GET', url: '/api/console/workspace', headers: { cookie } });
    expect(after.json()).toMatchObject({ plan: 'free', trialDaysLeft: 0, aiCallLimit: 100 });
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/keys/me', headers: { 'x-api-key': s.key } });
    expect(me.json().workspace).toMatchObject({ plan: 'free' });
    await runMaintenance({ db: t.infra.pool, quota: t.deps.quota, bus: t.infra.bus, clock: t.clock });
    const changes = await t.infra.pool.query(
      `SELECT from_plan, to_plan, reason FROM plan_changes WHERE workspace_id = $1 ORDER BY id`,
      [s.workspaceId],
    );
    expect(changes.rows).toEqual([
      { from_plan: null, to_plan: 'trial', reason: 'created' },
      { from_plan: 'trial', to_plan: 'free', reason: 'trial_ended' },
    ]);
  });

  it('upgrading records a plan change and lifts the limits at once', async () => {
    const s = await signUp(t.app, { plan: 'free' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/console/plan',
      headers: { cookie: s.cookie, 'x-csrf-token': s.csrf },
      payload: { plan: 'service' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ plan: 'service', aiCallLimit: 50_000, trialDaysLeft: null });
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/console/plan',
      headers: { cookie: s.cookie, 'x-csrf-token': s.csrf },
      payload: { plan: 'trial' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual([{ path: '/plan', message: 'must be one of free, service' }]);
  });
});
