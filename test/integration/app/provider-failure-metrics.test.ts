import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { startOpenAiFake } from '../../helpers/fake-providers/openai-fake.js';
import { startAnthropicFake } from '../../helpers/fake-providers/anthropic-fake.js';
import type { FakeServer } from '../../helpers/fake-providers/fake-server.js';
import { remoteTriageEnv } from '../../helpers/triage-setup.js';
import { parsePrometheus, sampleSum, type Sample } from '../../helpers/prometheus.js';

/**
 * Provider failures reach the metrics (docs/operations.md#metrics): the routine tier's provider (a fake OpenAI
 * on 127.0.0.1 speaking its real error bodies) answers 5xx, then 429; the escalated tier (a fake
 * Anthropic) answers. Each request is still answered, and the error, escalation and latency
 * series of the failing provider move by what happened, labelled by provider and kind.
 */
let t: TestApp;
let openai: FakeServer;
let anthropic: FakeServer;
let key: string;

beforeAll(async () => {
  openai = await startOpenAiFake([{ kind: 'server_error' }]);
  anthropic = await startAnthropicFake([{ kind: 'success', answer: { confidenceScore: 0.9 } }]);
  t = await startTestApp({ env: remoteTriageEnv(openai, anthropic) });
  key = (await signUp(t.app)).key;
}, 60_000);
afterAll(async () => {
  await t?.close();
  await openai?.close();
  await anthropic?.close();
});

const scrape = async (): Promise<Sample[]> => {
  const res = await t.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  return parsePrometheus(res.body);
};

/** A routine finding: no CVE, LOW, so the routine tier (OpenAI) is asked first. */
const triage = () =>
  t.app.inject({
    method: 'POST',
    url: '/api/v1/triage',
    headers: { 'x-api-key': key },
    payload: {
      title: 'Weak TLS cipher',
      severity: 'LOW',
      description: 'TLS 1.0 enabled on an internal host',
    },
  });

const delta = (before: Sample[], after: Sample[], name: string, labels: Record<string, string>) =>
  sampleSum(after, name, labels) - sampleSum(before, name, labels);

describe('provider failures in /metrics', () => {
  it('counts a 5xx as an unavailable provider, escalates, and the next tier answers', async () => {
    const before = await scrape();
    const res = await triage();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ model: 'anthropic:claude-sonnet-4-5' });
    const after = await scrape();

    const openaiErrors = { provider: 'openai', kind: 'unavailable' };
    expect(delta(before, after, 'vuln_triage_provider_errors_total', openaiErrors)).toBe(1);
    expect(delta(before, after, 'vuln_triage_provider_errors_total', { provider: 'anthropic' })).toBe(0);
    expect(delta(before, after, 'vuln_triage_triage_escalations_total', { reason: 'provider_error' })).toBe(
      1,
    );
    const failedHop = { provider: 'openai', tier: 'routine', outcome: 'provider_error' };
    expect(delta(before, after, 'vuln_triage_provider_latency_seconds_count', failedHop)).toBe(1);
    const answer = { tier: 'escalated-1', provider: 'anthropic' };
    expect(delta(before, after, 'vuln_triage_triage_answers_total', answer)).toBe(1);
    expect(delta(before, after, 'vuln_triage_triage_unavailable_total', {})).toBe(0);
    // The adapter retried the 5xx before giving up: one hop, however many HTTP attempts.
    expect(openai.requests.length).toBeGreaterThanOrEqual(1);
  });

  it('counts a 429 as rate_limited', async () => {
    openai.script([{ kind: 'rate_limited', retryAfterMs: 1 }]);
    const before = await scrape();
    const res = await triage();
    expect(res.statusCode, res.body).toBe(200);
    const after = await scrape();
    expect(
      delta(before, after, 'vuln_triage_provider_errors_total', { provider: 'openai', kind: 'rate_limited' }),
    ).toBe(1);
    expect(delta(before, after, 'vuln_triage_provider_errors_total', { kind: 'unavailable' })).toBe(0);
    expect(delta(before, after, 'vuln_triage_triage_escalations_total', { reason: 'provider_error' })).toBe(
      1,
    );
  });

  it('counts a request no tier can answer as unavailable, with an error per provider', async () => {
    openai.script([{ kind: 'overloaded' }]);
    anthropic.script([{ kind: 'overloaded' }]);
    const before = await scrape();
    const res = await triage();
    // No CVE and no enrichment: the policy has nothing to answer from either.
    expect(res.statusCode, res.body).toBe(503);
    const after = await scrape();
    expect(delta(before, after, 'vuln_triage_triage_unavailable_total', {})).toBe(1);
    expect(
      delta(before, after, 'vuln_triage_provider_errors_total', {
        provider: 'anthropic',
        kind: 'unavailable',
      }),
    ).toBe(1);
    expect(
      delta(before, after, 'vuln_triage_provider_errors_total', { provider: 'openai', kind: 'unavailable' }),
    ).toBe(2);
  });
});
