import { describe, expect, it } from 'vitest';
import { routeTriage } from '../../../src/domain/triage-engine/router.js';
import type { Provider } from '../../../src/domain/triage-engine/types.js';
import { answered, failed, scriptedProvider } from '../../helpers/fake-providers/in-process.js';
import { enrichment, enrichmentMap } from './enrichment-fixtures.js';
import { CVE, chain, providers, quiet, routineReq } from './router-fixtures.js';

describe('routeTriage: failures, fallbacks and cancellation', () => {
  it('moves up on a provider error without retrying the same tier', async () => {
    const fast = scriptedProvider('fast', [failed('rate_limited')]);
    const big = scriptedProvider('big', [failed('unavailable')]);
    const bigger = scriptedProvider('bigger', [answered()]);
    const out = await routeTriage({
      request: routineReq,
      enrichment: quiet,
      providers: providers(fast, big, bigger),
      chain,
    });
    expect(out.hops.map((h) => [h.tier, h.errorKind, h.escalationReason])).toEqual([
      ['routine', 'rate_limited', 'provider_error'],
      ['escalated-1', 'unavailable', 'provider_error'],
      ['escalated-2', undefined, null],
    ]);
    expect(out.ok && out.response.model).toBe('bigger:bigger-2');
  });

  it('lets the last answer stand after the policy when the top tier is also unsure', async () => {
    const p = scriptedProvider('p', [
      answered({ confidenceScore: 0.2, priority: 'LOW', recommendedAction: 'ACCEPT_RISK' }),
    ]);
    const kevMap = enrichmentMap(enrichment(CVE, { kev: true }));
    const out = await routeTriage({
      request: routineReq,
      enrichment: kevMap,
      providers: providers(p, p, p),
      chain,
    });
    expect(out.hops).toHaveLength(3);
    expect(out.ok && out.response).toMatchObject({
      priority: 'HIGH',
      model: 'bigger:bigger-2',
      confidenceScore: 0.2,
    });
    expect(out.ok && out.policyChanges.map((c) => c.rule)).toContain('KEV_FLOOR');
  });

  it('keeps a lower tier answer when the higher tiers fail', async () => {
    const fast = scriptedProvider('fast', [answered({ confidenceScore: 0.4 })]);
    const down = scriptedProvider('down', [failed('timeout')]);
    const out = await routeTriage({
      request: routineReq,
      enrichment: quiet,
      providers: providers(fast, down, down),
      chain,
    });
    expect(out.ok && out.response.model).toBe('fast:fast-mini');
    expect(out.hops.map((h) => h.outcome)).toEqual(['low_confidence', 'provider_error', 'provider_error']);
  });

  it('does not repeat the same engine when every tier is served by one local model', async () => {
    const local = scriptedProvider('local', [answered({ confidenceScore: 0.5 })]);
    const localChain = chain.map((t) => ({ ...t, provider: 'local', model: 'ssvc-2.0.3' }));
    const out = await routeTriage({
      request: routineReq,
      enrichment: quiet,
      providers: { local },
      chain: localChain,
    });
    expect(local.calls).toHaveLength(1);
    expect(out.ok && out.response.model).toBe('local:ssvc-2.0.3');
  });

  it('answers policy:ssvc when every provider is down and enrichment exists', async () => {
    const down = scriptedProvider('down', [failed('unavailable', [5, 0])]);
    const kevMap = enrichmentMap(enrichment(CVE, { kev: true, epss: 0.5 }));
    const out = await routeTriage({
      request: { ...routineReq, asset: { internetExposed: true } },
      enrichment: kevMap,
      providers: providers(down, down, down),
      chain,
    });
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.servedBy).toEqual({ tier: 'policy', provider: 'policy', model: 'ssvc', billedAs: null });
    expect(out.response).toMatchObject({
      model: 'policy:ssvc',
      priority: 'CRITICAL',
      recommendedAction: 'PATCH_IMMEDIATELY',
      usage: { inputTokens: 10, outputTokens: 0 },
    });
    expect(out.hops).toHaveLength(2);
  });

  it('reports triage_unavailable when nothing answered and nothing is known', async () => {
    const down = scriptedProvider('down', [failed('unavailable')]);
    const out = await routeTriage({
      request: routineReq,
      enrichment: enrichmentMap(),
      providers: providers(down, down, down),
      chain,
    });
    expect(out).toEqual({
      ok: false,
      error: {
        code: 'triage_unavailable',
        detail: 'No model in the escalation chain could answer and no safe answer could be formed.',
      },
      hops: expect.any(Array),
      highRisk: [],
    });
    expect(out.hops).toHaveLength(3);
  });

  it('answers overloaded with the earliest Retry-After when every tier is out of capacity', async () => {
    const busy = (ms: number) => {
      const r = failed('rate_limited');
      return r.ok ? r : { ...r, error: { ...r.error, retryAfterMs: ms } };
    };
    const out = await routeTriage({
      request: routineReq,
      enrichment: enrichmentMap(),
      providers: providers(
        scriptedProvider('fast', [busy(9_000)]),
        scriptedProvider('big', [busy(2_500)]),
        scriptedProvider('bigger', [busy(60_000)]),
      ),
      chain,
    });
    expect(out).toMatchObject({ ok: false, error: { code: 'overloaded', retryAfterMs: 2_500 } });
    expect(out.hops).toHaveLength(3);
    // One tier down for another reason: the chain is not merely busy.
    const mixed = await routeTriage({
      request: routineReq,
      enrichment: enrichmentMap(),
      providers: providers(
        scriptedProvider('fast', [busy(1_000)]),
        scriptedProvider('big', [failed('unavailable')]),
        scriptedProvider('bigger', [busy(1_000)]),
      ),
      chain,
    });
    expect(mixed).toMatchObject({ ok: false, error: { code: 'triage_unavailable' } });
  });

  it('treats a throwing provider and a missing provider as provider errors', async () => {
    const throwing: Provider = { name: 'fast', triage: () => Promise.reject(new Error('boom')) };
    const big = scriptedProvider('big', [answered()]);
    const out = await routeTriage({
      request: routineReq,
      enrichment: quiet,
      providers: { fast: throwing, big },
      chain,
    });
    expect(out.hops.map((h) => [h.tier, h.outcome, h.errorKind])).toEqual([
      ['routine', 'provider_error', 'unavailable'],
      ['escalated-1', 'answered', undefined],
    ]);
    const missing = await routeTriage({ request: routineReq, enrichment: quiet, providers: { big }, chain });
    expect(missing.hops.map((h) => [h.tier, h.outcome, h.errorKind])).toEqual([
      ['routine', 'provider_error', 'unavailable'],
      ['escalated-1', 'answered', undefined],
    ]);
  });

  it('stops walking once the signal is aborted', async () => {
    const controller = new AbortController();
    const fast = scriptedProvider('fast', [
      () => {
        controller.abort();
        return failed('timeout');
      },
    ]);
    const big = scriptedProvider('big', [answered()]);
    const out = await routeTriage({
      request: routineReq,
      enrichment: enrichmentMap(),
      providers: providers(fast, big, big),
      chain,
      signal: controller.signal,
    });
    expect(big.calls).toHaveLength(0);
    expect(out.ok === false && out.error.detail).toBe('Triage was cancelled before any model answered.');
  });
});
