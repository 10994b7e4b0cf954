import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { createCoalescer } from '../../../src/lib/coalescer.js';
import {
  recordTriageGroup,
  recordTriages,
  type RecordOutcome,
  type SingleRecord,
} from '../../../src/domain/triage/triage-store.js';

/**
 * The group commit of single answers (`POST /api/v1/triage` under load): one statement stores a
 * group — result, ledger, shadow and AI call — all or nothing; a month the group's takes would
 * pass stores none of them and they are then stored one by one, so the limit holds per answer;
 * a group that fails is retried answer by answer (the coalescer), so one bad answer fails alone.
 */
describe('recordTriages / recordTriageGroup', () => {
  let t: TestApp;
  const month = '2026-11-01';

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  function record(
    ws: { workspaceId: string; keyId: string },
    settle: SingleRecord['settle'],
    withShadow = true,
  ): SingleRecord {
    const requestId = `req-${randomUUID()}`;
    return {
      resultId: randomUUID(),
      workspaceId: ws.workspaceId,
      keyId: ws.keyId,
      model: 'local:ssvc-2.0.3',
      priority: 'LOW',
      response: { priority: 'LOW', requestId },
      hops: [],
      policyChanges: [],
      policyVersion: 'test',
      at: new Date(),
      ledger: [
        {
          workspaceId: ws.workspaceId,
          keyId: ws.keyId,
          requestId,
          tier: 'routine',
          catalogModel: 'svc-triage-routine',
          providerModel: 'local',
          inputTokens: 100,
          outputTokens: 10,
          costPicos: 1234n,
          aiCall: true,
        },
      ],
      shadow: withShadow
        ? { engine: 'inhouse', modelVersion: 'v1', answer: { priority: 'LOW' }, agrees: true }
        : null,
      settle,
    };
  }

  async function stored(workspaceId: string) {
    const r = await t.infra.pool.query(
      `SELECT (SELECT count(*) FROM triage_results WHERE workspace_id = $1)::int AS results,
              (SELECT count(*) FROM usage_ledger WHERE workspace_id = $1)::int AS ledger,
              (SELECT count(*) FROM triage_shadow_answers s JOIN triage_results r ON r.id = s.triage_result_id
                WHERE r.workspace_id = $1)::int AS shadow,
              (SELECT COALESCE(sum(cost_picos), 0)::text FROM usage_ledger WHERE workspace_id = $1) AS picos,
              (SELECT used FROM ai_call_quota WHERE workspace_id = $1 AND month = $2) AS used,
              (SELECT reserved FROM ai_call_quota WHERE workspace_id = $1 AND month = $2) AS reserved`,
      [workspaceId, month],
    );
    return r.rows[0];
  }

  const all = (n: number, o: RecordOutcome) => Array.from({ length: n }, () => o);
  const yes = { recorded: true, finished: false };
  const no = { recorded: false, finished: false };

  it('stores a group of takes across two workspaces in one statement, each month counted once', async () => {
    const a = await signUp(t.app);
    const b = await signUp(t.app);
    const take = { take: { limit: 5, month } };
    const out = await recordTriages(t.infra.pool, [
      record(a, take),
      record(b, take),
      record(a, take, false),
      record(a, take),
    ]);
    expect(out).toEqual(all(4, yes));
    expect(await stored(a.workspaceId)).toMatchObject({
      results: 3,
      ledger: 3,
      shadow: 2,
      picos: '3702',
      used: 3,
    });
    expect(await stored(b.workspaceId)).toMatchObject({ results: 1, ledger: 1, shadow: 1, used: 1 });
  });

  it('refuses a month whose takes would pass the limit whole, writing nothing for it', async () => {
    const a = await signUp(t.app);
    const b = await signUp(t.app);
    await recordTriages(t.infra.pool, [record(a, { take: { limit: 3, month } })]);
    const out = await recordTriages(t.infra.pool, [
      record(a, { take: { limit: 3, month } }),
      record(b, { take: { limit: 3, month } }),
      record(a, { take: { limit: 3, month } }),
      record(a, { take: { limit: 3, month } }),
    ]);
    expect(out).toEqual([no, yes, no, no]);
    expect(await stored(a.workspaceId)).toMatchObject({ results: 1, ledger: 1, used: 1 });
    expect(await stored(b.workspaceId)).toMatchObject({ results: 1, ledger: 1, used: 1 });
  });

  it('stores the refused answers of a group one by one, up to the limit exactly', async () => {
    const a = await signUp(t.app);
    const take = { take: { limit: 3, month } };
    await recordTriages(t.infra.pool, [record(a, take)]);
    const out = await recordTriageGroup(t.infra.pool, [
      record(a, take),
      record(a, take),
      record(a, take),
      record(a, take),
    ]);
    expect(out).toEqual([yes, yes, no, no]);
    expect(await stored(a.workspaceId)).toMatchObject({ results: 3, ledger: 3, used: 3 });
  });

  it('settles each reservation once by the number of its answers in the group', async () => {
    const a = await signUp(t.app);
    const r1 = await t.deps.quota.reserve(a.workspaceId, 3, 100, 60_000);
    const r2 = await t.deps.quota.reserve(a.workspaceId, 1, 100, 60_000);
    if (!r1.ok || !r2.ok) throw new Error('no quota');
    const [m] = (
      await t.infra.pool.query(`SELECT month::text FROM quota_reservations WHERE id = $1`, [
        r1.reservation.id,
      ])
    ).rows.map((r) => r.month as string);
    const out = await recordTriages(t.infra.pool, [
      record(a, { reservationId: r1.reservation.id }),
      record(a, { reservationId: r2.reservation.id }),
      record(a, { reservationId: r1.reservation.id }),
    ]);
    expect(out).toEqual(all(3, yes));
    const q = await t.infra.pool.query(
      `SELECT used, reserved FROM ai_call_quota WHERE workspace_id = $1 AND month = $2`,
      [a.workspaceId, m],
    );
    expect(q.rows[0]).toEqual({ used: 3, reserved: 1 });
    const left = await t.infra.pool.query(
      `SELECT id, amount FROM quota_reservations WHERE workspace_id = $1`,
      [a.workspaceId],
    );
    expect(left.rows).toEqual([{ id: r1.reservation.id, amount: 1 }]);
    const ledger = await t.infra.pool.query(
      `SELECT count(*)::int AS n FROM usage_ledger WHERE workspace_id = $1`,
      [a.workspaceId],
    );
    expect(ledger.rows[0].n).toBe(3);
  });

  it('a failing group writes nothing; through the coalescer each answer is retried alone and only the bad one fails', async () => {
    const a = await signUp(t.app);
    const take = { take: { limit: 10, month } };
    const bad = { ...record(a, take), resultId: 'not-a-uuid' };
    await expect(recordTriages(t.infra.pool, [record(a, take), bad])).rejects.toThrow();
    expect(await stored(a.workspaceId)).toMatchObject({ results: 0, ledger: 0, used: null });

    const groups: number[] = [];
    const c = createCoalescer(
      (rs: SingleRecord[]) => {
        groups.push(rs.length);
        return recordTriageGroup(t.infra.pool, rs);
      },
      { maxItems: 64 },
    );
    const settled = await Promise.allSettled([
      c.submit(record(a, take)), // alone: nothing was running
      c.submit(record(a, take)), // these three go together, fail together, then one by one
      c.submit(bad),
      c.submit(record(a, take)),
    ]);
    expect(groups.slice(0, 2)).toEqual([1, 3]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(await stored(a.workspaceId)).toMatchObject({ results: 3, ledger: 3, used: 3 });
  });
});
