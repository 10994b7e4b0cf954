import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { monthlyStatement, perKeyTotals, usageSeries } from '../../../src/domain/usage/usage-report.js';
import { addKeyRequests } from '../../../src/domain/usage/counter-store.js';
import { recordModelCalls } from '../../../src/domain/usage/ledger-store.js';
import { workspaceLedgerTotals } from '../../../src/domain/usage/usage-report-store.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const base = {
  requestId: null,
  providerModel: 'gpt-x',
} as const;

describe('usage reports over the usage store', () => {
  it('sums counters and ledger per day, per key and tier, and rounds spend once in picos', async () => {
    const { workspaceId, keyId } = await signUp(t.app);
    await addKeyRequests(
      t.infra.pool,
      [
        { keyId, workspaceId, day: '2026-03-02', requests: 5 },
        { keyId, workspaceId, day: '2026-03-04', requests: 2 },
      ],
      [{ keyId, at: new Date('2026-03-04T12:00:00Z') }],
    );
    const row = (at: string, tier: string, tokens: number, costPicos: bigint, aiCall: boolean) => ({
      ...base,
      workspaceId,
      keyId,
      tier,
      catalogModel: tier,
      inputTokens: tokens,
      outputTokens: 1,
      costPicos,
      aiCall,
      at: new Date(at),
    });
    await recordModelCalls(t.infra.pool, [
      row('2026-03-02T10:00:00Z', 'small', 10, 400_000n, true),
      row('2026-03-02T23:59:59Z', 'small', 20, 400_000n, true),
      row('2026-03-04T00:00:00Z', 'large', 30, 1_700_000n, false),
      row('2026-04-01T00:00:00Z', 'large', 40, 9_000_000n, true),
    ]);

    const series = await usageSeries(
      t.infra.pool,
      { column: 'workspace_id', id: workspaceId },
      new Date('2026-03-02T00:00:00Z'),
      new Date('2026-03-05T00:00:00Z'),
    );
    expect(series.daily.map((d) => [d.date, d.requests, d.aiCalls, d.inputTokens, d.spendMicros])).toEqual([
      ['2026-03-02', 5, 2, 30, '1'],
      ['2026-03-03', 0, 0, 0, '0'],
      ['2026-03-04', 2, 0, 30, '2'],
    ]);
    // 2.5 µ$ of spend: the total rounds the sum, not the rounded days (1 + 2).
    expect(series.totals).toEqual({
      requests: 7,
      aiCalls: 2,
      inputTokens: 60,
      outputTokens: 3,
      spendMicros: '3',
      spendUsd: '0.000003',
    });
    const byKey = await usageSeries(
      t.infra.pool,
      { column: 'key_id', id: keyId },
      new Date('2026-03-02T00:00:00Z'),
      new Date('2026-03-05T00:00:00Z'),
    );
    expect(byKey.totals).toEqual(series.totals);

    const statement = await monthlyStatement(
      t.infra.pool,
      workspaceId,
      new Date('2026-03-01T00:00:00Z'),
      new Date('2026-04-01T00:00:00Z'),
    );
    expect(statement.lines.map((l) => [l.keyId, l.tier, l.aiCalls, l.inputTokens, l.spendMicros])).toEqual([
      [keyId, 'large', 0, 30, '2'],
      [keyId, 'small', 2, 30, '1'],
    ]);
    expect(statement.totals).toEqual({ aiCalls: 2, tokens: 63, spendMicros: '3', spendUsd: '0.000003' });

    const totals = await perKeyTotals(t.infra.pool, workspaceId);
    expect(totals.get(keyId)).toEqual({ requests: 7, tokens: 104, spendUsd: '0.000012' });
    expect(await workspaceLedgerTotals(t.infra.pool, workspaceId, '2026-04-01')).toEqual({
      tokens: 104,
      spendPicos: '9000000',
    });
  });
});
