import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/domain/inhouse/canonical-json.js';
import { parseLabelledDataset } from '../../../src/domain/inhouse/dataset.js';
import { runGateStudies } from '../../../src/domain/inhouse/gate-studies.js';
import { loadInhouseModel } from '../../../src/domain/inhouse/model.js';
import { cveOrder, splitByTime, withoutVerbatimDescriptions } from '../../../src/domain/inhouse/split.js';
import { DEFAULT_TRAIN_OPTIONS, trainInhouseModel } from '../../../src/domain/inhouse/train.js';
import { ROOT } from './support.js';

const rowsOf = (...cves: string[]) => cves.map((cve) => ({ cve, description: `text of ${cve}` }));

describe('time-ordered split', () => {
  it('orders by CVE year, then by number as a number, and scores the newest 20%', () => {
    const rows = rowsOf(
      'CVE-2024-10000',
      'CVE-2023-99999',
      'CVE-2024-9999',
      'CVE-2022-1234',
      'CVE-2024-21000',
      'CVE-2023-0001',
      'CVE-2024-1000',
      'CVE-2021-44228',
      'CVE-2025-0002',
      'CVE-2024-100000',
    );
    const { train, validation } = splitByTime(rows, 20);
    expect(validation.map((r) => r.cve)).toEqual(['CVE-2024-100000', 'CVE-2025-0002']);
    expect(train.map((r) => r.cve)).toEqual([
      'CVE-2021-44228',
      'CVE-2022-1234',
      'CVE-2023-0001',
      'CVE-2023-99999',
      'CVE-2024-1000',
      'CVE-2024-9999',
      'CVE-2024-10000',
      'CVE-2024-21000',
    ]);
    expect(cveOrder('CVE-2024-0042')).toEqual([2024, 42]);
  });

  it('rounds the scored share down and keeps every row on exactly one side', () => {
    const rows = rowsOf('CVE-2020-1', 'CVE-2020-2', 'CVE-2020-3', 'CVE-2020-4', 'CVE-2020-5', 'CVE-2020-6');
    const { train, validation } = splitByTime(rows, 20);
    expect(validation.map((r) => r.cve)).toEqual(['CVE-2020-6']);
    expect(train).toHaveLength(5);
  });
});

describe('verbatim-description filter', () => {
  it('drops scored rows whose description, trimmed, appears in the trained-on rows, and no others', () => {
    const trained = [{ description: 'A vulnerability was found in Foo 1.0. It has been rated as critical.' }];
    const scored = [
      {
        cve: 'CVE-2024-1',
        description: '  A vulnerability was found in Foo 1.0. It has been rated as critical.\n',
      },
      {
        cve: 'CVE-2024-2',
        description: 'A vulnerability was found in Foo 1.1. It has been rated as critical.',
      },
      {
        cve: 'CVE-2024-3',
        description: 'a vulnerability was found in foo 1.0. it has been rated as critical.',
      },
    ];
    expect(withoutVerbatimDescriptions(scored, trained).map((r) => r.cve)).toEqual([
      'CVE-2024-2',
      'CVE-2024-3',
    ]);
  });
});

describe('gate studies on a training file', () => {
  it('scores the shipped weights on the random split and a refit on the time-ordered split, with and without verbatim rows', () => {
    const text = readFileSync(path.join(ROOT, 'test/fixtures/inhouse/labelled-train-sample.csv'), 'utf8');
    const rows = parseLabelledDataset(text);
    const sha256 = sha256Hex(text);
    const options = { ...DEFAULT_TRAIN_OPTIONS, epochs: 3, minDf: 3 };
    const { file, report } = trainInhouseModel(rows, { datasetSha256: sha256 }, options);
    const model = loadInhouseModel(file);
    const studies = runGateStudies(model, { rows, sha256 }, rows.slice(0, 50));

    expect(studies.trainingSha256).toBe(sha256);
    expect(studies.randomSplit).toMatchObject({
      split: 'sha256(cve)[0:8] mod 100 < 20',
      trainRows: report.trainRows,
      modelVersion: model.version,
      metrics: report.validation,
    });
    expect(studies.timeOrdered.split).toBe('newest 20% by CVE year and number');
    expect(studies.timeOrdered.trainRows).toBe(128);
    expect(studies.timeOrdered.metrics.rows).toBe(32);
    expect(studies.timeOrdered.modelVersion).not.toBe(model.version);
    // The fixture holds pairs of rows sharing a description, some across each split.
    for (const f of [studies.randomSplit, studies.timeOrdered]) {
      expect(f.withoutVerbatim.metrics.rows + f.withoutVerbatim.dropped).toBe(f.metrics.rows);
    }
    expect(
      studies.randomSplit.withoutVerbatim.dropped + studies.timeOrdered.withoutVerbatim.dropped,
    ).toBeGreaterThan(0);
    expect(studies.underTestWithoutVerbatim.metrics.rows + studies.underTestWithoutVerbatim.dropped).toBe(50);
  });
});
