import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, createKey, type TestApp } from '../../helpers/test-app.js';
import { startOpenAiFake } from '../../helpers/fake-providers/openai-fake.js';
import { startAnthropicFake } from '../../helpers/fake-providers/anthropic-fake.js';
import type { FakeServer, FakeStep } from '../../helpers/fake-providers/fake-server.js';
import { importKev } from '../../../src/domain/enrichment/kev-import.js';
import models from '../../../config/models.json' with { type: 'json' };

/**
 * Billing (docs/triage.md#billing): 1,000 mixed calls through fake providers speaking the real wire formats.
 * The ledger must equal Σ tokens × catalog price exactly, per key and per tier, and
 * `/api/v1/usage` must agree. Prices are turned into pico-dollars here independently of
 * the product code: "3.00" USD per 1M tokens is 3,000,000 pico-dollars per token.
 */
const CALLS = 1000;
let t: TestApp;
let openai: FakeServer;
let anthropic: FakeServer;

function steps(seed: number): FakeStep[] {
  // A fixed pseudo-random script: varied token counts, one answer in five below 0.7 confidence.
  let x = seed;
  const rnd = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: 4 * CALLS }, () => ({
    kind: 'success' as const,
    usage: [100 + Math.floor(rnd() * 900), 20 + Math.floor(rnd() * 300)] as [number, number],
    answer: { confidenceScore: rnd() < 0.2 ? 0.55 : 0.9 },
  }));
}

function picosPerToken(price: string): bigint {
  const [whole, frac = ''] = price.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
}

beforeAll(async () => {
  openai = await startOpenAiFake(steps(7));
  anthropic = await startAnthropicFake(steps(11));
  const dir = mkdtempSync(path.join(tmpdir(), 'triage-config-'));
  const configFile = path.join(dir, 'triage.json');
  const base = JSON.parse(
    JSON.stringify((await import('../../../config/triage.json', { with: { type: 'json' } })).default),
  );
  for (const p of Object.values(base.providers) as {
    requestsPerMinute: number;
    tokensPerMinute: number;
    maxRetries: number;
  }[]) {
    p.requestsPerMinute = 100_000;
    p.tokensPerMinute = 100_000_000;
  }
  writeFileSync(configFile, JSON.stringify(base));
  t = await startTestApp({
    env: {
      OPENAI_API_KEY: 'sk-test-openai-secret',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ANTHROPIC_API_KEY: 'sk-ant-test-secret',
      ANTHROPIC_BASE_URL: anthropic.url,
      TRIAGE_CONFIG_FILE: configFile,
    },
  });
  await importKev(t.infra.pool, {
    file: path.resolve('test/fixtures/enrichment/known_exploited_vulnerabilities.json.gz'),
  });
}, 60_000);
afterAll(async () => {
  await t.close();
  await openai.close();
  await anthropic.close();
  const logged = t.logs.join('\n');
  expect(logged).not.toContain('sk-test-openai-secret');
  expect(logged).not.toContain('sk-ant-test-secret');
});

describe('billing through fake providers', () => {
  it('1,000 mixed calls: the ledger equals Σ tokens × price per key and tier, and /api/v1/usage agrees', async () => {
    const owner = await signUp(t.app, { plan: 'trial' });
    const keys = [owner, await createKey(t.app, owner, ['triage:write', 'usage:read'], 'second')].map(
      (k) => ({
        id: 'keyId' in k ? k.keyId : k.id,
        key: k.key,
      }),
    );
    const responses: { key: number; usage: { inputTokens: number; outputTokens: number }; model: string }[] =
      [];
    let next = 0;
    const runOne = async (): Promise<void> => {
      for (let i = next++; i < CALLS; i = next++) {
        const k = i % 2;
        const highRisk = i % 4 === 0;
        const payload = highRisk
          ? { cveIds: ['CVE-2021-44228'], title: `Log4Shell ${i}`, severity: 'CRITICAL', cvssScore: 10 }
          : {
              title: `Finding ${i}`,
              severity: 'MEDIUM',
              description: 'Outdated library on an internal service',
            };
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/triage',
          headers: { 'x-api-key': keys[k]!.key },
          payload,
        });
        if (res.statusCode !== 200) throw new Error(`call ${i}: ${res.statusCode} ${res.body}`);
        responses.push({ key: k, usage: res.json().usage, model: res.json().model });
      }
    };
    await Promise.all(Array.from({ length: 16 }, runOne));
    expect(responses).toHaveLength(CALLS);
    // Routine findings were answered by the routine tier's provider, escalations by the others.
    expect(responses.some((r) => r.model.startsWith('openai:'))).toBe(true);
    expect(responses.some((r) => r.model.startsWith('anthropic:'))).toBe(true);

    const rows = await t.infra.pool.query<{
      key_id: string;
      catalog_model: string;
      i: string;
      o: string;
      picos: string;
      micros: string;
      calls: string;
    }>(
      `SELECT key_id, catalog_model, sum(input_tokens)::text AS i, sum(output_tokens)::text AS o, sum(cost_picos)::text AS picos,
              sum(cost_micros)::text AS micros, count(*) FILTER (WHERE ai_call)::text AS calls
         FROM usage_ledger WHERE workspace_id = $1 GROUP BY key_id, catalog_model`,
      [owner.workspaceId],
    );
    const price = new Map(models.models.map((m) => [m.id, m]));
    let totalCalls = 0;
    for (const r of rows.rows) {
      const m = price.get(r.catalog_model)!;
      const expected =
        BigInt(r.i) * picosPerToken(m.inputPricePerMillion) +
        BigInt(r.o) * picosPerToken(m.outputPricePerMillion);
      expect(BigInt(r.picos)).toBe(expected);
      totalCalls += Number(r.calls);
    }
    expect(new Set(rows.rows.map((r) => r.catalog_model))).toEqual(
      new Set(['svc-triage-routine', 'svc-triage-v1']),
    );
    // Per tier: the routine tier is billed at svc-triage-routine, every escalated tier at
    // svc-triage-v1 (docs/triage.md#billing) — checked from the tier, not from the row's own catalog id.
    const byTier = await t.infra.pool.query<{ tier: string; catalog_model: string }>(
      `SELECT DISTINCT tier, catalog_model FROM usage_ledger WHERE workspace_id = $1 ORDER BY tier`,
      [owner.workspaceId],
    );
    expect(byTier.rows.length).toBeGreaterThanOrEqual(2);
    for (const r of byTier.rows) {
      expect(r.catalog_model, r.tier).toBe(r.tier === 'routine' ? 'svc-triage-routine' : 'svc-triage-v1');
    }
    expect(totalCalls).toBe(CALLS);

    for (const [k, key] of keys.entries()) {
      const mine = responses.filter((r) => r.key === k);
      const fromResponses = mine.reduce(
        (s, r) => ({ i: s.i + r.usage.inputTokens, o: s.o + r.usage.outputTokens }),
        { i: 0, o: 0 },
      );
      const ledger = rows.rows.filter((r) => r.key_id === key.id);
      expect({
        i: ledger.reduce((s, r) => s + Number(r.i), 0),
        o: ledger.reduce((s, r) => s + Number(r.o), 0),
      }).toEqual(fromResponses);
      const picos = ledger.reduce((s, r) => s + BigInt(r.picos), 0n);
      const usage = await t.app.inject({
        method: 'GET',
        url: '/api/v1/usage',
        headers: { 'x-api-key': key.key },
      });
      expect(usage.json().key).toMatchObject({
        aiCalls: mine.length,
        inputTokens: fromResponses.i,
        outputTokens: fromResponses.o,
        spendMicros: ((picos + 500_000n) / 1_000_000n).toString(),
      });
    }
    // Every token the fakes reported is in the ledger: nothing billed twice, nothing lost.
    const served = [...openai.requests, ...anthropic.requests].length;
    const hopRows = await t.infra.pool.query(
      `SELECT count(*)::int AS n FROM usage_ledger WHERE workspace_id = $1`,
      [owner.workspaceId],
    );
    expect(hopRows.rows[0].n).toBe(served);
  }, 300_000);
});
