import { describe, expect, it } from 'vitest';
import { SEVERITY_RANK } from '../../../src/domain/triage-engine/baseline.js';
import {
  SAFETY_POLICY_VERSION,
  applySafetyPolicy,
  type UncheckedAnswer,
} from '../../../src/domain/triage-engine/safety-policy.js';
import { loadInhouseModel } from '../../../src/domain/inhouse/model.js';
import { inhouseTriageRequest } from '../../../src/domain/inhouse/provider.js';
import type { TriageAnswer, TriageRequest } from '../../../src/domain/triage-engine/types.js';
import { enrichment, enrichmentMap } from './enrichment-fixtures.js';
import { INHOUSE_MODEL_PATH, readInhouseModelJson } from '../../../src/domain/inhouse/model-file.js';

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

describe('applySafetyPolicy: one rule at a time', () => {
  it('has a version', () => {
    expect(SAFETY_POLICY_VERSION).toMatch(/^\d{4}-\d{2}-\d{2}\.\d+$/);
  });

  it('leaves a consistent low-risk answer alone', () => {
    const out = applySafetyPolicy(lowAnswer, base, none);
    expect(out).toEqual({ answer: lowAnswer, changes: [] });
  });

  it.each([
    { field: 'priority', value: 'URGENT', expected: 'HIGH' },
    { field: 'recommendedAction', value: 'REBOOT', expected: 'INVESTIGATE' },
    { field: 'severityOverride', value: 'SEVERE', expected: null },
    { field: 'reasoning', value: 42, expected: '' },
  ] as const)('ENUMS: $field $value → $expected', ({ field, value, expected }) => {
    const raw: UncheckedAnswer = { ...lowAnswer, recommendedAction: 'MONITOR', [field]: value };
    const out = applySafetyPolicy(raw, base, none);
    // reasoning carries the policy tag after the replaced value
    expect(out.answer[field]).toBe(field === 'reasoning' ? ' [policy:ENUMS]' : expected);
    expect(out.changes[0]).toEqual({ rule: 'ENUMS', field, from: value, to: expected });
    expect(out.answer.reasoning).toContain('[policy:ENUMS]');
  });

  it('STORABLE_TEXT: drops U+0000 and replaces lone surrogates, without repeating the bad text', () => {
    const out = applySafetyPolicy({ ...lowAnswer, reasoning: 'a\u0000b \ud800c \ud83d\ude00' }, base, none);
    expect(out.answer.reasoning).toBe('ab \uFFFDc \ud83d\ude00 [policy:STORABLE_TEXT]');
    expect(out.changes).toEqual([
      {
        rule: 'STORABLE_TEXT',
        field: 'reasoning',
        from: 'text with U+0000 or lone surrogates',
        to: 'ab \uFFFDc \ud83d\ude00',
      },
    ]);
  });

  it.each([
    { value: 1.7, expected: 1 },
    { value: -0.2, expected: 0 },
    { value: Number.NaN, expected: 0 },
    { value: 'high', expected: 0 },
    { value: undefined, expected: 0 },
  ])('CONFIDENCE_CLAMP: $value → $expected', ({ value, expected }) => {
    const out = applySafetyPolicy({ ...lowAnswer, confidenceScore: value }, base, none);
    expect(out.answer.confidenceScore).toBe(expected);
    expect(out.changes.map((c) => c.rule)).toEqual(['CONFIDENCE_CLAMP']);
  });

  it.each([
    // active (KEV) + automatable + total + high mission → Act
    {
      decision: 'Act',
      min: 'HIGH',
      action: 'PATCH_IMMEDIATELY',
      asset: { criticality: 'CRITICAL' as const },
    },
    // EPSS poc + automatable + total + high → Attend
    {
      decision: 'Attend',
      min: 'MEDIUM',
      action: 'PATCH_SCHEDULED',
      asset: { criticality: 'CRITICAL' as const },
    },
  ])('SSVC_FLOOR: $decision raises to at least $min/$action', ({ decision, min, action, asset }) => {
    const e = decision === 'Act' ? { kev: true } : { epss: 0.5 };
    const map = enrichmentMap(
      enrichment(CVE, { ...e, cvssScore: 9.8, cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' }),
    );
    const out = applySafetyPolicy({ ...lowAnswer, recommendedAction: 'MONITOR' }, { ...base, asset }, map);
    expect(SEVERITY_RANK[out.answer.priority]).toBeGreaterThanOrEqual(SEVERITY_RANK[min as 'HIGH']);
    expect(out.answer.recommendedAction).toBe(action);
    expect(out.changes[0]?.rule).toBe('SSVC_FLOOR');
  });

  it('SSVC_FLOOR: Track* forbids ACCEPT_RISK', () => {
    // none + not automatable + total + high mission → Track*
    const map = enrichmentMap(
      enrichment(CVE, { cvssScore: 8.1, cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:N' }),
    );
    const out = applySafetyPolicy(lowAnswer, { ...base, asset: { criticality: 'CRITICAL' } }, map);
    expect(out.answer.recommendedAction).toBe('MONITOR');
    expect(out.changes).toEqual([
      { rule: 'SSVC_FLOOR', field: 'recommendedAction', from: 'ACCEPT_RISK', to: 'MONITOR' },
    ]);
  });

  it('KEV_FLOOR: a KEV CVE is never below HIGH', () => {
    const out = applySafetyPolicy(
      { ...lowAnswer, recommendedAction: 'PATCH_SCHEDULED' },
      { ...base, asset: { criticality: 'LOW' } },
      kev,
    );
    expect(out.answer.priority).toBe('HIGH');
    expect(out.changes.map((c) => c.rule)).toContain('KEV_FLOOR');
  });

  it('ends the reasoning with the decision that stands and why the policy changed the proposed one', () => {
    const out = applySafetyPolicy(
      {
        ...lowAnswer,
        priority: 'MEDIUM',
        recommendedAction: 'MONITOR',
        reasoning: 'Not in reach of attackers; recommended: monitor it.',
      },
      { ...base, asset: { criticality: 'LOW' } },
      kev,
    );
    expect(out.answer).toMatchObject({ priority: 'HIGH', recommendedAction: 'PATCH_SCHEDULED' });
    expect(out.answer.reasoning).toBe(
      'Not in reach of attackers; recommended: monitor it. [policy:KEV_FLOOR] [policy:PRIORITY_ACTION_CONSISTENCY] ' +
        'Final decision: HIGH priority, patch in the next scheduled window; the safety policy changed the proposed ' +
        "MEDIUM priority, monitor it for new exploitation evidence, because a CVE in CISA's Known Exploited " +
        'Vulnerabilities catalog is never below HIGH, and the action must match the priority.',
    );
  });

  it('KEV_EXPOSED: KEV on an internet-exposed asset → CRITICAL and PATCH_IMMEDIATELY, even over MITIGATE', () => {
    const req = { ...base, asset: { criticality: 'LOW' as const, internetExposed: true } };
    const out = applySafetyPolicy(
      { ...lowAnswer, priority: 'HIGH', recommendedAction: 'MITIGATE' },
      req,
      kev,
    );
    expect(out.answer.priority).toBe('CRITICAL');
    expect(out.answer.recommendedAction).toBe('PATCH_IMMEDIATELY');
    expect(out.answer.reasoning).toContain('[policy:KEV_EXPOSED]');
  });

  it.each([
    {
      name: 'EPSS >= 0.1',
      map: enrichmentMap(enrichment(CVE, { epss: 0.1 })),
      asset: { criticality: 'LOW' as const },
    },
    {
      name: 'exposed with CVSS >= 7',
      map: none,
      asset: { criticality: 'LOW' as const, internetExposed: true },
      cvssScore: 7,
    },
  ])('NO_ACCEPT_RISK: $name', ({ map, asset, cvssScore }) => {
    const out = applySafetyPolicy(lowAnswer, { ...base, asset, cvssScore }, map);
    expect(out.answer.recommendedAction).toBe('PATCH_SCHEDULED');
    expect(out.changes.map((c) => c.rule)).toEqual(['NO_ACCEPT_RISK']);
  });

  it('NO_ACCEPT_RISK does not fire below the thresholds', () => {
    const map = enrichmentMap(enrichment(CVE, { epss: 0.099 }));
    const out = applySafetyPolicy(
      lowAnswer,
      { ...base, cvssScore: 6.9, asset: { criticality: 'LOW', internetExposed: true } },
      map,
    );
    expect(out.answer.recommendedAction).toBe('ACCEPT_RISK');
  });

  it.each([
    { priority: 'CRITICAL', action: 'PATCH_SCHEDULED', expected: ['CRITICAL', 'PATCH_IMMEDIATELY'] },
    { priority: 'CRITICAL', action: 'MITIGATE', expected: ['CRITICAL', 'MITIGATE'] },
    { priority: 'HIGH', action: 'MONITOR', expected: ['HIGH', 'PATCH_SCHEDULED'] },
    { priority: 'HIGH', action: 'ACCEPT_RISK', expected: ['HIGH', 'PATCH_SCHEDULED'] },
    { priority: 'HIGH', action: 'INVESTIGATE', expected: ['HIGH', 'INVESTIGATE'] },
    { priority: 'LOW', action: 'PATCH_IMMEDIATELY', expected: ['HIGH', 'PATCH_IMMEDIATELY'] },
  ] as const)(
    'PRIORITY_ACTION_CONSISTENCY: $priority/$action → $expected',
    ({ priority, action, expected }) => {
      const out = applySafetyPolicy({ ...lowAnswer, priority, recommendedAction: action }, base, none);
      expect([out.answer.priority, out.answer.recommendedAction]).toEqual(expected);
    },
  );

  it('KEV_NO_SEVERITY_DOWNGRADE: a KEV finding keeps its submitted severity', () => {
    const out = applySafetyPolicy(
      { ...lowAnswer, priority: 'HIGH', recommendedAction: 'PATCH_SCHEDULED', severityOverride: 'LOW' },
      { ...base, severity: 'HIGH' },
      kev,
    );
    expect(out.answer.severityOverride).toBeNull();
    expect(out.changes).toContainEqual({
      rule: 'KEV_NO_SEVERITY_DOWNGRADE',
      field: 'severityOverride',
      from: 'LOW',
      to: null,
    });
  });

  it('allows a severity downgrade when the CVE is not in KEV, and an upgrade when it is', () => {
    expect(
      applySafetyPolicy({ ...lowAnswer, severityOverride: 'LOW' }, base, none).answer.severityOverride,
    ).toBe('LOW');
    const up = applySafetyPolicy(
      { ...lowAnswer, priority: 'HIGH', recommendedAction: 'PATCH_SCHEDULED', severityOverride: 'CRITICAL' },
      base,
      kev,
    );
    expect(up.answer.severityOverride).toBe('CRITICAL');
  });

  it('SEVERITY_OVERRIDE_SAME: an override equal to the submitted severity becomes null', () => {
    const out = applySafetyPolicy({ ...lowAnswer, severityOverride: 'MEDIUM' }, base, none);
    expect(out.answer.severityOverride).toBeNull();
    expect(out.answer.reasoning).toBe('looks fine [policy:SEVERITY_OVERRIDE_SAME]');
  });

  describe('UNKNOWN_CRITICAL: a critical finding of unknown exposure', () => {
    const noExposure: TriageRequest = { cveIds: [CVE], title: 'remote code execution', severity: 'CRITICAL' };

    it('is never below MEDIUM nor ACCEPT_RISK, and the reasoning says why', () => {
      const out = applySafetyPolicy(lowAnswer, noExposure, none);
      expect(out.answer.priority).toBe('MEDIUM');
      expect(out.answer.recommendedAction).toBe('PATCH_SCHEDULED');
      expect(out.changes.map((c) => c.rule)).toEqual(['UNKNOWN_CRITICAL', 'UNKNOWN_CRITICAL']);
      expect(out.answer.reasoning).toContain('[policy:UNKNOWN_CRITICAL]');
      expect(out.answer.reasoning).toContain('internet exposure is unknown');
    });

    it('applies to CVSS >= 9.0 whatever the submitted severity, and not below it', () => {
      const scored = { ...base, severity: 'LOW' as const };
      expect(applySafetyPolicy(lowAnswer, { ...scored, cvssScore: 9.8 }, none).answer.priority).toBe(
        'MEDIUM',
      );
      expect(applySafetyPolicy(lowAnswer, { ...scored, cvssScore: 8.9 }, none).answer).toEqual(lowAnswer);
      const stored = enrichmentMap(enrichment(CVE, { cvssScore: 9.1 }));
      expect(applySafetyPolicy(lowAnswer, scored, stored).answer.recommendedAction).toBe('PATCH_SCHEDULED');
    });

    it('leaves the answer alone when the exposure is known, either way', () => {
      for (const internetExposed of [false, true]) {
        const known = { ...noExposure, cvssScore: 9.8, asset: { internetExposed } };
        const out = applySafetyPolicy(lowAnswer, known, none);
        expect(out.changes.filter((c) => c.rule === 'UNKNOWN_CRITICAL')).toEqual([]);
      }
    });

    it('raises the in-house model’s LOW answer for a CVSS 9.8 finding without asset context', () => {
      const model = loadInhouseModel(readInhouseModelJson(INHOUSE_MODEL_PATH));
      const request: TriageRequest = { cveIds: [CVE], title: 'rce', severity: 'CRITICAL', cvssScore: 9.8 };
      const proposed = inhouseTriageRequest(model, request, none);
      expect(proposed.priority).toBe('LOW');
      const out = applySafetyPolicy({ ...proposed, severityOverride: null }, request, none).answer;
      expect(SEVERITY_RANK[out.priority]).toBeGreaterThanOrEqual(SEVERITY_RANK.MEDIUM);
      expect(out.recommendedAction).not.toBe('ACCEPT_RISK');
    });

    it('never lowers what is already higher', () => {
      const high: TriageAnswer = { ...lowAnswer, priority: 'HIGH', recommendedAction: 'MITIGATE' };
      expect(applySafetyPolicy(high, noExposure, none)).toEqual({ answer: high, changes: [] });
    });
  });
});
