import { describe, expect, it } from 'vitest';
import type { GateRecord } from '../../../src/domain/inhouse/gate.js';
import { explainInhouseMode, inhouseMode } from '../../../src/domain/inhouse/shadow.js';

const V = 'sha256:1111';
const record = (over: Partial<GateRecord> & { kev?: number } = {}): GateRecord =>
  ({
    modelVersion: V,
    datasetSha256: 'f'.repeat(64),
    datasetName: 'bench.csv',
    thresholds: {
      minAgreementOverBaseline: 0.02,
      minElevatedRecall: 0.6,
      minNonTrackPrecision: 0.65,
      minAccuracy: { exploitation: 0, automatable: 0, technicalImpact: 0 },
      minRows: 1,
    },
    metrics: { kevFloorViolations: over.kev ?? 0 } as GateRecord['metrics'],
    passed: true,
    failures: [],
    evaluatedAt: '2026-11-21T19:00:00.000Z',
    ...over,
  }) as GateRecord;

/** What an earlier release's gate applied: an absolute agreement floor below the Track-for-all baseline. */
const OLD_THRESHOLDS = {
  minAgreement: 0.93,
  minElevatedAgreement: 0.4,
  minAccuracy: { exploitation: 0.85, automatable: 0.9, technicalImpact: 0.88 },
  minRows: 30,
} as unknown as GateRecord['thresholds'];

describe('in-house shadow/serving decision', () => {
  it.each([
    ['passing record for this version, operator enabled', record(), true, 'serving'],
    ['passing record for this version, operator disabled', record(), false, 'shadow'],
    ['no record, operator enabled', null, true, 'shadow'],
    ['undefined record, operator enabled', undefined, true, 'shadow'],
    ['passing record for another version', record({ modelVersion: 'sha256:2222' }), true, 'shadow'],
    ['failing record for this version', record({ passed: false, failures: ['x'] }), true, 'shadow'],
    ['record marked passed but with KEV violations', record({ kev: 1 }), true, 'shadow'],
    ['failing record, operator disabled', record({ passed: false }), false, 'shadow'],
    [
      'passing record judged by the thresholds of an earlier release',
      record({ thresholds: OLD_THRESHOLDS }),
      true,
      'shadow',
    ],
  ] as const)('%s → %s', (_name, gateRecord, operatorEnabled, expected) => {
    expect(inhouseMode({ gateRecord, modelVersion: V, operatorEnabled })).toBe(expected);
  });

  it('says why it stays in shadow', () => {
    expect(
      explainInhouseMode({
        gateRecord: record({ modelVersion: 'sha256:2222' }),
        modelVersion: V,
        operatorEnabled: true,
      }),
    ).toEqual({
      mode: 'shadow',
      reason: 'gate record is for sha256:2222, not sha256:1111',
    });
  });

  it('says a pass of an earlier gate no longer counts', () => {
    expect(
      explainInhouseMode({
        gateRecord: record({ thresholds: OLD_THRESHOLDS }),
        modelVersion: V,
        operatorEnabled: true,
      }),
    ).toEqual({
      mode: 'shadow',
      reason:
        'gate passed for sha256:1111 at 2026-11-21T19:00:00.000Z by thresholds of an earlier release; run npm run gate again',
    });
  });
});
