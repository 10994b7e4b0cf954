import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { startOpenAiFake } from '../../helpers/fake-providers/openai-fake.js';
import { startAnthropicFake } from '../../helpers/fake-providers/anthropic-fake.js';
import type { FakeServer } from '../../helpers/fake-providers/fake-server.js';
import { problemDocument } from '../../helpers/problem.js';
import {
  pollBatch,
  remoteTriageEnv,
  startTriageTestWorker,
  triageCounts,
} from '../../helpers/triage-setup.js';

/**
 * A request no model could answer (503 `triage_unavailable`) may still have cost us tokens:
 * providers charge for answers that violate the response schema. Its hops are kept in
 * `triage_unanswered` for our own cost accounting, and the caller is billed nothing: no ledger
 * row, no AI call, nothing in `/api/v1/usage`. Every tier here answers schema-violating content:
 * each is asked twice (one retry), so six hops per request.
 */
let t: TestApp;
let openai: FakeServer;
let anthropic: FakeServer;

beforeAll(async () => {
  openai = await startOpenAiFake([{ kind: 'schema_violation' }]);
  anthropic = await startAnthropicFake([{ kind: 'schema_violation' }]);
  t = await startTestApp({ env: remoteTriageEnv(openai, anthropic) });
  // No CVE, so no enrichment the policy could answer from alone.
}, 60_000);
afterAll(async () => {
  await t.close();
  await openai.close();
  await anthropic.close();
});

const finding = {
  title: 'Weak TLS cipher',
  severity: 'LOW',
  description: 'TLS 1.0 enabled on an internal host',
};

/** The hops of the fakes' schema violations, as usage they report: OpenAI 812/21, Anthropic 1034/40. */
const SIX_HOPS = [
  { tier: 'routine', provider: 'openai', providerModel: 'gpt-4.1-mini', inputTokens: 812, outputTokens: 21 },
  { tier: 'routine', provider: 'openai', providerModel: 'gpt-4.1-mini', inputTokens: 812, outputTokens: 21 },
  {
    tier: 'escalated-1',
    provider: 'anthropic',
    providerModel: 'claude-sonnet-4-5',
    inputTokens: 1034,
    outputTokens: 40,
  },
  {
    tier: 'escalated-1',
    provider: 'anthropic',
    providerModel: 'claude-sonnet-4-5',
    inputTokens: 1034,
    outputTokens: 40,
  },
  { tier: 'escalated-2', provider: 'openai', providerModel: 'gpt-4.1', inputTokens: 812, outputTokens: 21 },
  { tier: 'escalated-2', provider: 'openai', providerModel: 'gpt-4.1', inputTokens: 812, outputTokens: 21 },
].map((h) => ({ ...h, outcome: 'schema_violation', errorKind: 'schema_violation' }));

async function unanswered(workspaceId: string) {
  const res = await t.infra.pool.query(
    `SELECT key_id, request_id, hops, input_tokens, output_tokens FROM triage_unanswered WHERE workspace_id = $1`,
    [workspaceId],
  );
  return res.rows;
}

/** The caller was billed nothing: no ledger row, no AI call, and usage shows none. */
async function expectNotBilled(s: { workspaceId: string; key: string }): Promise<void> {
  const ledger = await t.infra.pool.query(
    `SELECT count(*)::int AS n FROM usage_ledger WHERE workspace_id = $1`,
    [s.workspaceId],
  );
  expect(ledger.rows[0].n).toBe(0);
  const usage = await t.app.inject({ method: 'GET', url: '/api/v1/usage', headers: { 'x-api-key': s.key } });
  expect(usage.json().key).toMatchObject({ aiCalls: 0, inputTokens: 0, outputTokens: 0, spendMicros: '0' });
  expect(usage.json().workspace).toMatchObject({ aiCalls: 0, aiCallsThisMonth: 0 });
}

describe('the hops of a request that ends 503 triage_unavailable', () => {
  it('a single request: 503, its six hops and their tokens kept for cost accounting, nothing billed', async () => {
    const s = await signUp(t.app, { plan: 'trial' });
    const before = { openai: openai.requests.length, anthropic: anthropic.requests.length };
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/triage',
      headers: { 'x-api-key': s.key },
      payload: finding,
    });
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json()).toEqual(
      problemDocument(
        503,
        'triage_unavailable',
        'Triage unavailable',
        'No model could answer and no safe answer could be formed from enrichment; retry later.',
      ),
    );
    expect(openai.requests.length - before.openai).toBe(4);
    expect(anthropic.requests.length - before.anthropic).toBe(2);

    const rows = await unanswered(s.workspaceId);
    expect(rows).toEqual([
      {
        key_id: s.keyId,
        request_id: res.json().requestId,
        hops: SIX_HOPS.map((h) => expect.objectContaining(h)),
        input_tokens: 4 * 812 + 2 * 1034,
        output_tokens: 4 * 21 + 2 * 40,
      },
    ]);
    await expectNotBilled(s);
    await t.deps.triage.close(); // the leased AI call went back to its lease; the lease goes back now
    expect(await triageCounts(t, s.workspaceId)).toEqual({
      results: 0,
      calls: 0,
      used: 0,
      reserved: 0,
      reservations: 0,
    });
  });

  it('a batch item: failed with triage_unavailable, its hops kept, its reserved call released', async () => {
    const worker = startTriageTestWorker(t);
    try {
      const s = await signUp(t.app, { plan: 'trial' });
      const accepted = await t.app.inject({
        method: 'POST',
        url: '/api/v1/triage/batch',
        headers: { 'x-api-key': s.key },
        payload: { items: [finding] },
      });
      expect(accepted.statusCode, accepted.body).toBe(202);
      const { batchId } = accepted.json();
      const done = await pollBatch(t, s.key, batchId, 30_000);
      expect(done).toMatchObject({ status: 'failed', total: 1, completed: 0, failed: 1 });
      expect(done.items[0].error).toEqual({
        code: 'triage_unavailable',
        detail: 'No model could answer and no safe answer could be formed from enrichment; retry later.',
      });

      expect(await unanswered(s.workspaceId)).toEqual([
        {
          key_id: s.keyId,
          request_id: `batch:${batchId}:0`,
          hops: SIX_HOPS.map((h) => expect.objectContaining(h)),
          input_tokens: 4 * 812 + 2 * 1034,
          output_tokens: 4 * 21 + 2 * 40,
        },
      ]);
      await expectNotBilled(s);
      expect(await triageCounts(t, s.workspaceId)).toEqual({
        results: 0,
        calls: 0,
        used: 0,
        reserved: 0,
        reservations: 0,
      });
    } finally {
      await worker.close();
    }
  });
});
