import { describe, expect, it } from 'vitest';
import { routeTriage } from '../../../src/domain/triage-engine/router.js';
import {
  answered,
  failed,
  scriptedProvider,
  steppingClock,
} from '../../helpers/fake-providers/in-process.js';
import { enrichment, enrichmentMap } from './enrichment-fixtures.js';
import { CVE, chain, providers, quiet, routineReq } from './router-fixtures.js';

describe('routeTriage: starting tier and escalation', () => {
  it('serves a routine finding from the routine tier with one hop', async () => {
    const fast = scriptedProvider('fast', [answered({}, [120, 30])]);
    const big = scriptedProvider('big', [answered()]);
    const out = await routeTriage({
      request: routineReq,
      enrichment: quiet,
      providers: providers(fast, big, big),
      chain,
      clock: steppingClock(),
    });
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.response).toEqual({
      priority: 'MEDIUM',
      recommendedAction: 'PATCH_SCHEDULED',
      reasoning: 'scripted',
      confidenceScore: 0.9,
      severityOverride: null,
      model: 'fast:fast-mini',
      triagedAt: '2026-11-21T12:00:00.133Z',
      usage: { inputTokens: 120, outputTokens: 30 },
    });
    expect(out.hops).toEqual([
      {
        tier: 'routine',
        provider: 'fast',
        providerModel: 'fast-mini',
        billedAs: 'svc-triage-routine',
        inputTokens: 120,
        outputTokens: 30,
        latencyMs: 5,
        outcome: 'answered',
        escalationReason: null,
      },
    ]);
    expect(out.servedBy).toBe(chain[0]);
    expect(big.calls).toHaveLength(0);
    expect(fast.calls[0]?.model).toBe('fast-mini');
  });

  it.each([
    { name: 'KEV + EPSS', req: routineReq, map: enrichmentMap(enrichment(CVE, { kev: true, epss: 0.94 })) },
    {
      name: 'CRITICAL + CVSS 9.8',
      req: { ...routineReq, severity: 'CRITICAL' as const, cvssScore: 9.8 },
      map: quiet,
    },
    {
      name: 'KEV ransomware',
      req: routineReq,
      map: enrichmentMap(enrichment(CVE, { kev: true, kevRansomware: true })),
    },
  ])('starts $name one step up the chain', async ({ req, map }) => {
    const fast = scriptedProvider('fast', [answered()]);
    const big = scriptedProvider('big', [
      answered({ priority: 'CRITICAL', recommendedAction: 'PATCH_IMMEDIATELY' }),
    ]);
    const out = await routeTriage({
      request: req,
      enrichment: map,
      providers: providers(fast, big, big),
      chain,
    });
    expect(fast.calls).toHaveLength(0);
    expect(out.ok && out.response.model).toBe('big:big-1');
    expect(out.hops.map((h) => h.tier)).toEqual(['escalated-1']);
  });

  it('escalates a low-confidence answer exactly one more hop', async () => {
    const fast = scriptedProvider('fast', [answered({ confidenceScore: 0.69 }, [100, 10])]);
    const big = scriptedProvider('big', [answered({ confidenceScore: 0.7, priority: 'HIGH' }, [200, 20])]);
    const bigger = scriptedProvider('bigger', [answered()]);
    const out = await routeTriage({
      request: routineReq,
      enrichment: quiet,
      providers: providers(fast, big, bigger),
      chain,
    });
    expect(out.hops.map((h) => [h.tier, h.outcome, h.escalationReason])).toEqual([
      ['routine', 'low_confidence', 'low_confidence'],
      ['escalated-1', 'answered', null],
    ]);
    expect(bigger.calls).toHaveLength(0);
    expect(out.ok && out.response).toMatchObject({
      priority: 'HIGH',
      model: 'big:big-1',
      usage: { inputTokens: 300, outputTokens: 30 },
    });
  });

  it('retries a schema violation once, then moves up after the second', async () => {
    const fast = scriptedProvider('fast', [
      failed('schema_violation', [90, 40]),
      failed('schema_violation', [90, 41]),
    ]);
    const big = scriptedProvider('big', [answered({}, [10, 1])]);
    const out = await routeTriage({
      request: routineReq,
      enrichment: quiet,
      providers: providers(fast, big, big),
      chain,
    });
    expect(fast.calls).toHaveLength(2);
    expect(out.hops.map((h) => [h.tier, h.outcome, h.errorKind, h.escalationReason])).toEqual([
      ['routine', 'schema_violation', 'schema_violation', 'retry_schema_violation'],
      ['routine', 'schema_violation', 'schema_violation', 'schema_violation_twice'],
      ['escalated-1', 'answered', undefined, null],
    ]);
    expect(out.ok && out.response.usage).toEqual({ inputTokens: 190, outputTokens: 82 });
  });

  it('keeps the routine answer when a schema violation is followed by a good retry', async () => {
    const fast = scriptedProvider('fast', [failed('schema_violation'), answered()]);
    const big = scriptedProvider('big', [answered()]);
    const out = await routeTriage({
      request: routineReq,
      enrichment: quiet,
      providers: providers(fast, big, big),
      chain,
    });
    expect(out.ok && out.response.model).toBe('fast:fast-mini');
    expect(big.calls).toHaveLength(0);
  });
});
