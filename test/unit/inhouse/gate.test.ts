import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { evaluateModel } from '../../../src/domain/inhouse/evaluate.js';
import { GateConfigError, parseGateThresholds, runGate } from '../../../src/domain/inhouse/gate.js';
import type { GateRecord } from '../../../src/domain/inhouse/gate.js';
import { FileGateRecordStore } from '../../../src/domain/inhouse/gate-record-store.js';
import { loadInhouseModel } from '../../../src/domain/inhouse/model.js';
import { forcedNonePartialFile, sampleRows, sampleThresholds, shippedModel } from './support.js';

const DATASET = { sha256: 'a'.repeat(64), name: 'labelled-sample.csv' };
const NOW = new Date('2026-11-21T19:00:00.000Z');

describe('in-house benchmark gate', () => {
  it('passes the shipped model on the labelled sample and records version, dataset and time', () => {
    const model = shippedModel();
    const record = runGate(model, sampleRows(), sampleThresholds(), DATASET, NOW);
    expect(record).toMatchObject({
      modelVersion: model.version,
      datasetSha256: DATASET.sha256,
      datasetName: 'labelled-sample.csv',
      passed: true,
      failures: [],
      evaluatedAt: '2026-11-21T19:00:00.000Z',
    });
    expect(record.metrics.rows).toBe(40);
    expect(record.metrics.kevRows).toBe(6);
    expect(record.metrics.kevFloorViolations).toBe(0);
  });

  it('fails once the margin over the baseline is set just above what the model achieves', () => {
    const model = shippedModel();
    const m = evaluateModel(model, sampleRows());
    const achieved = m.agreement - m.majorityBaselineAgreement;
    const at = { ...sampleThresholds(), minAgreementOverBaseline: achieved };
    expect(runGate(model, sampleRows(), at, DATASET, NOW).passed).toBe(true);
    const above = { ...sampleThresholds(), minAgreementOverBaseline: achieved + 0.001 };
    const record = runGate(model, sampleRows(), above, DATASET, NOW);
    expect(record.passed).toBe(false);
    expect(record.failures).toEqual([
      'agreement 92.50% is 15.00 points over the majority baseline 77.50% < minAgreementOverBaseline 15.10 points',
    ]);
  });

  it('fails on per-decision-point accuracy and on too few rows', () => {
    const model = shippedModel();
    const t = {
      ...sampleThresholds(),
      minRows: 41,
      minAccuracy: { exploitation: 1, automatable: 0, technicalImpact: 0 },
    };
    const record = runGate(model, sampleRows(), t, DATASET, NOW);
    expect(record.passed).toBe(false);
    expect(record.failures).toEqual([
      'rows 40 < minRows 41',
      expect.stringMatching(/^exploitation accuracy \d+\.\d\d% < 100\.00%$/),
    ]);
  });

  it('fails a model that answers KEV rows below HIGH, whatever the thresholds', () => {
    const model = loadInhouseModel(forcedNonePartialFile(false));
    const lenient = {
      minAgreementOverBaseline: 0,
      minElevatedRecall: 0,
      minNonTrackPrecision: 0,
      minAccuracy: { exploitation: 0, automatable: 0, technicalImpact: 0 },
      minRows: 1,
    };
    const record = runGate(model, sampleRows(), lenient, DATASET, NOW);
    expect(record.passed).toBe(false);
    expect(record.metrics.kevFloorViolations).toBe(6);
    expect(record.failures).toEqual([expect.stringMatching(/^6 KEV row\(s\) answered below HIGH \(CVE-/)]);
  });

  it('fails the answer-Track-for-everything model on elevated recall even with the floor on', () => {
    const model = loadInhouseModel(forcedNonePartialFile(true));
    const record = runGate(model, sampleRows(), sampleThresholds(), DATASET, NOW);
    expect(record.metrics.kevFloorViolations).toBe(0);
    expect(record.metrics.elevatedRecall).toBe(0);
    expect(record.failures).toContain('elevated recall 0.00% < minElevatedRecall 60.00%');
  });

  it('rejects threshold files with missing or out-of-range values', () => {
    const good = sampleThresholds();
    expect(() => parseGateThresholds({ ...good, minAgreementOverBaseline: 2 })).toThrow(
      new GateConfigError('minAgreementOverBaseline must be a number in [0, 1], got 2'),
    );
    expect(() => parseGateThresholds({ ...good, minAccuracy: undefined })).toThrow(
      /minAccuracy must be an object/,
    );
    expect(() => parseGateThresholds({ ...good, minRows: 0 })).toThrow(
      'minRows must be a positive integer, got 0',
    );
    const shipped = JSON.parse(
      readFileSync(path.resolve(import.meta.dirname, '../../../config/inhouse-gate.json'), 'utf8'),
    );
    expect(() => parseGateThresholds(shipped)).not.toThrow();
  });
});

describe('FileGateRecordStore', () => {
  const record = (version: string, passed: boolean, at: string): GateRecord => ({
    ...runGate(shippedModel(), sampleRows(), sampleThresholds(), DATASET, new Date(at)),
    modelVersion: version,
    passed,
  });

  it('appends records and returns the latest one for exactly the asked version', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'inhouse-gate-')), 'nested', 'gate.json');
    const store = new FileGateRecordStore(file);
    expect(await store.latestFor('sha256:v1')).toBeNull();
    await store.append(record('sha256:v1', true, '2026-11-21T10:00:00.000Z'));
    await store.append(record('sha256:v2', true, '2026-11-21T11:00:00.000Z'));
    await store.append(record('sha256:v1', false, '2026-11-21T12:00:00.000Z'));
    expect((await store.latestFor('sha256:v1'))?.evaluatedAt).toBe('2026-11-21T12:00:00.000Z');
    expect((await store.latestFor('sha256:v2'))?.passed).toBe(true);
    expect(await store.latestFor('sha256:v3')).toBeNull();
    const onDisk = JSON.parse(readFileSync(file, 'utf8')) as { records: GateRecord[] };
    expect(onDisk.records.map((r) => r.modelVersion)).toEqual(['sha256:v1', 'sha256:v2', 'sha256:v1']);
  });

  it('refuses a record file of another shape rather than overwriting it', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'inhouse-gate-')), 'gate.json');
    writeFileSync(file, '{"something":"else"}');
    await expect(new FileGateRecordStore(file).latestFor('x')).rejects.toThrow('expected {"records": [...]}');
  });
});
