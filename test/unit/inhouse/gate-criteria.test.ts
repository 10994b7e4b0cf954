import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { outcomeRates } from '../../../src/domain/inhouse/evaluate.js';
import type { Confusion } from '../../../src/domain/inhouse/evaluate.js';
import {
  GateConfigError,
  parseGateThresholds,
  runGate,
  scoredRows,
} from '../../../src/domain/inhouse/gate.js';
import { loadInhouseModel, modelVersionOf } from '../../../src/domain/inhouse/model.js';
import type { SsvcDecision } from '../../../src/domain/triage-engine/ssvc.js';
import { forcedNonePartialFile, ROOT, sampleRows, sampleThresholds, shippedModel } from './support.js';

const DATASET = { sha256: 'a'.repeat(64), name: 'labelled-sample.csv' };
const NOW = new Date('2026-11-27T09:00:00.000Z');
const shippedThresholds = () =>
  parseGateThresholds(JSON.parse(readFileSync(path.join(ROOT, 'config/inhouse-gate.json'), 'utf8')));

function confusion(cells: Partial<Record<SsvcDecision, Partial<Record<SsvcDecision, number>>>>) {
  const row = (r: Partial<Record<SsvcDecision, number>> = {}) => ({
    Track: r.Track ?? 0,
    'Track*': r['Track*'] ?? 0,
    Attend: r.Attend ?? 0,
    Act: r.Act ?? 0,
  });
  return {
    Track: row(cells.Track),
    'Track*': row(cells['Track*']),
    Attend: row(cells.Attend),
    Act: row(cells.Act),
  } satisfies Confusion<SsvcDecision>;
}

describe('gate criteria (docs/triage.md#in-house-model)', () => {
  it('fails the majority-class "always Track" model on agreement over baseline and on elevated recall', () => {
    const alwaysTrack = loadInhouseModel(forcedNonePartialFile(true));
    const record = runGate(alwaysTrack, sampleRows(), shippedThresholds(), DATASET, NOW);
    expect(record.metrics.agreement).toBe(record.metrics.majorityBaselineAgreement);
    expect(record.metrics.kevFloorViolations).toBe(0);
    expect(record.passed).toBe(false);
    expect(record.failures).toEqual([
      'agreement 77.50% is 0.00 points over the majority baseline 77.50% < minAgreementOverBaseline 2.00 points',
      'elevated recall 0.00% < minElevatedRecall 60.00%',
      'no answer above Track to measure precision on',
      'exploitation accuracy 70.00% < 85.00%',
      'automatable accuracy 72.50% < 90.00%',
      'technicalImpact accuracy 67.50% < 88.00%',
    ]);
  });

  it('takes the baseline from the scored file, not a constant: the same margin passes or fails with the mix', () => {
    const alwaysTrack = loadInhouseModel(forcedNonePartialFile(true));
    const lenient = { ...sampleThresholds(), minElevatedRecall: 0, minNonTrackPrecision: 0 };
    const lenientAccuracy = {
      ...lenient,
      minAccuracy: { exploitation: 0, automatable: 0, technicalImpact: 0 },
    };
    const onlyTrack = sampleRows().filter((r) => r.exploitation === 'none' && !r.kev);
    const record = runGate(alwaysTrack, onlyTrack, { ...lenientAccuracy, minRows: 1 }, DATASET, NOW);
    expect(record.metrics.agreement).toBe(1);
    expect(record.metrics.majorityBaselineAgreement).toBe(1);
    expect(record.failures).toEqual([
      'agreement 100.00% is 0.00 points over the majority baseline 100.00% < minAgreementOverBaseline 2.00 points',
    ]);
  });

  it('computes elevated recall and non-Track precision on exact outcomes of a hand-made confusion', () => {
    // Labelled elevated: 10 Track* + 4 Attend + 2 Act = 16; exactly right: 6 + 3 + 1 = 10.
    // Answered elevated: Track* 6+5 (from Track) +1 (from Attend); Attend 3+1 (from Act); Act 1+2 (from Track*) = 19.
    const c = confusion({
      Track: { Track: 80, 'Track*': 5 },
      'Track*': { Track: 2, 'Track*': 6, Act: 2 },
      Attend: { 'Track*': 1, Attend: 3 },
      Act: { Attend: 1, Act: 1 },
    });
    expect(outcomeRates(c)).toEqual({ elevatedRecall: 10 / 16, nonTrackPrecision: 10 / 19 });
    expect(outcomeRates(confusion({ Track: { Track: 5 } }))).toEqual({
      elevatedRecall: null,
      nonTrackPrecision: null,
    });
  });

  it('fails on non-Track precision below its threshold and passes at it', () => {
    // The shipped model on the sample: 8 answers above Track, 6 of them exactly right.
    const model = shippedModel();
    const at = runGate(
      model,
      sampleRows(),
      { ...sampleThresholds(), minNonTrackPrecision: 0.75 },
      DATASET,
      NOW,
    );
    expect(at.metrics.nonTrackPrecision).toBe(0.75);
    expect(at.passed).toBe(true);
    const above = runGate(
      model,
      sampleRows(),
      { ...sampleThresholds(), minNonTrackPrecision: 0.76 },
      DATASET,
      NOW,
    );
    expect(above.failures).toEqual(['non-Track precision 75.00% < minNonTrackPrecision 76.00%']);
  });

  it('scores only the held-out split of the file the model was trained on, every row of any other file', () => {
    const rows = sampleRows();
    const { body } = forcedNonePartialFile(true);
    const trained = {
      ...body,
      training: { datasetSha256: DATASET.sha256, options: { validationPercent: 10 } },
    };
    const trainedOnIt = loadInhouseModel({ version: modelVersionOf(trained), body: trained });
    const own = scoredRows(trainedOnIt, rows, DATASET.sha256);
    // The sample is the slice below 20, so a 10% split keeps part of it.
    expect(own.rows.length).toBeGreaterThan(0);
    expect(own.rows.length).toBeLessThan(rows.length);
    expect(own.scope).toBe(
      "the model's training file: only its held-out random split (sha256(cve)[0:8] mod 100 < 10)",
    );
    expect(scoredRows(trainedOnIt, rows, 'b'.repeat(64))).toEqual({ rows, scope: 'all rows' });
    const record = runGate(trainedOnIt, rows, sampleThresholds(), DATASET, NOW);
    expect(record.metrics).toMatchObject({ rows: own.rows.length, datasetRows: 40, scope: own.scope });
  });

  it('refuses thresholds of an earlier release and out-of-range new ones', () => {
    const good = sampleThresholds();
    expect(() => parseGateThresholds({ ...good, minAgreement: 0.93 })).toThrow(
      new GateConfigError('unknown threshold(s) minAgreement'),
    );
    expect(() => parseGateThresholds({ ...good, minElevatedRecall: 60 })).toThrow(
      'minElevatedRecall must be a number in [0, 1], got 60',
    );
    const { minNonTrackPrecision: _dropped, ...missing } = good;
    expect(() => parseGateThresholds(missing)).toThrow('minNonTrackPrecision must be a number in [0, 1]');
    expect(shippedThresholds()).toMatchObject({
      minAgreementOverBaseline: 0.02,
      minElevatedRecall: 0.6,
      minNonTrackPrecision: 0.65,
    });
  });
});
