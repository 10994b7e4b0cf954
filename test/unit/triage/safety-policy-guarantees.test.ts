import { describe, expect, it } from 'vitest';
import { ACTION_RANK, SEVERITY_RANK } from '../../../src/domain/triage-engine/baseline.js';
import { applySafetyPolicy, policyOnlyAnswer } from '../../../src/domain/triage-engine/safety-policy.js';
import {
  PRIORITIES,
  RECOMMENDED_ACTIONS,
  type TriageAnswer,
  type TriageRequest,
} from '../../../src/domain/triage-engine/types.js';
import { enrichment, enrichmentMap, loadKevFixture } from './enrichment-fixtures.js';

const CVE = 'CVE-2024-12345';
const base: TriageRequest = { cveIds: [CVE], title: 'finding', severity: 'MEDIUM' };
const lowAnswer: TriageAnswer = {
  priority: 'LOW',
  recommendedAction: 'ACCEPT_RISK',
  reasoning: 'looks fine',
  confidenceScore: 0.9,
  severityOverride: null,
};
const none = enrichmentMap();
const kev = enrichmentMap(enrichment(CVE, { kev: true }));

describe('applySafetyPolicy never lowers risk', () => {
  // Deterministic pseudo-random sweep (LCG) over answers and contexts.
  let seed = 42;
  const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const cases = Array.from({ length: 500 }, () => ({
    answer: {
      ...lowAnswer,
      priority: PRIORITIES[next(5)]!,
      recommendedAction: RECOMMENDED_ACTIONS[next(6)]!,
    },
    request: {
      ...base,
      cvssScore: next(101) / 10,
      asset: {
        criticality: (['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'] as const)[next(4)],
        internetExposed: next(2) === 1,
      },
    },
    map: enrichmentMap(enrichment(CVE, { kev: next(3) === 0, epss: next(100) / 100 })),
  }));
  it('priority and action rank never drop over 500 mixed cases', () => {
    for (const c of cases) {
      const out = applySafetyPolicy(c.answer, c.request, c.map).answer;
      expect(SEVERITY_RANK[out.priority]).toBeGreaterThanOrEqual(SEVERITY_RANK[c.answer.priority]);
      expect(ACTION_RANK[out.recommendedAction]).toBeGreaterThanOrEqual(
        ACTION_RANK[c.answer.recommendedAction],
      );
    }
  });
});

describe('the whole CISA KEV catalog against a provider that says LOW/ACCEPT_RISK', () => {
  const catalog = loadKevFixture();
  const assets = [
    undefined,
    { criticality: 'LOW' as const, environment: 'TEST' as const },
    { criticality: 'HIGH' as const, internetExposed: true },
  ];

  it('reads all 1,404 entries', () => {
    expect(catalog).toHaveLength(1404);
  });

  it('leaves no answer below HIGH and none ACCEPT_RISK', () => {
    let exposedCritical = 0;
    for (const [i, record] of catalog.entries()) {
      const asset = assets[i % assets.length];
      const request: TriageRequest = { cveIds: [record.cveId], title: record.cveId, severity: 'LOW', asset };
      const { answer } = applySafetyPolicy(lowAnswer, request, enrichmentMap(record));
      expect(SEVERITY_RANK[answer.priority], record.cveId).toBeGreaterThanOrEqual(SEVERITY_RANK.HIGH);
      expect(answer.recommendedAction, record.cveId).not.toBe('ACCEPT_RISK');
      expect(answer.recommendedAction, record.cveId).not.toBe('MONITOR');
      if (asset?.internetExposed) {
        expect(answer).toMatchObject({ priority: 'CRITICAL', recommendedAction: 'PATCH_IMMEDIATELY' });
        exposedCritical += 1;
      }
    }
    expect(exposedCritical).toBe(468);
  });
});

describe('policyOnlyAnswer', () => {
  it('returns null when no CVE has an enrichment record', () => {
    expect(policyOnlyAnswer(base, none)).toBeNull();
    expect(policyOnlyAnswer({ title: 't', severity: 'HIGH', description: 'no cves' }, none)).toBeNull();
  });

  it('forms a safe answer from KEV alone', () => {
    const out = policyOnlyAnswer({ ...base, asset: { internetExposed: true } }, kev);
    expect(out?.answer).toMatchObject({
      priority: 'CRITICAL',
      recommendedAction: 'PATCH_IMMEDIATELY',
      confidenceScore: 0.5,
      severityOverride: null,
    });
    expect(out?.answer.reasoning).toMatch(/SSVC (Act|Attend)/);
  });

  it('keeps the submitted severity for a quiet CVE', () => {
    const out = policyOnlyAnswer(
      { ...base, severity: 'HIGH' },
      enrichmentMap(enrichment(CVE, { epss: 0.001, cvssScore: 5.0 })),
    );
    expect(out?.answer).toMatchObject({ priority: 'HIGH', recommendedAction: 'PATCH_SCHEDULED' });
  });
});
