import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/domain/inhouse/canonical-json.js';
import { parseLabelledDataset } from '../../../src/domain/inhouse/dataset.js';
import type { LabelledRow } from '../../../src/domain/inhouse/dataset.js';
import type { Selection } from '../../../src/domain/inhouse/selection.js';
import { SELECTION_ROUNDS, SELECTION_WEIGHTS } from '../../../src/domain/inhouse/selection.js';
import { isHeldOut } from '../../../src/domain/inhouse/split.js';
import {
  DEFAULT_TRAIN_OPTIONS,
  outOfFoldStackInputs,
  stackFold,
  trainInhouseModel,
} from '../../../src/domain/inhouse/train.js';
import { ROOT } from './support.js';

const TEXT = readFileSync(path.join(ROOT, 'test/fixtures/inhouse/labelled-train-sample.csv'), 'utf8');
const OPTIONS = { ...DEFAULT_TRAIN_OPTIONS, epochs: 5, minDf: 3 };

function rows(): LabelledRow[] {
  return parseLabelledDataset(TEXT);
}

describe('model selection on the training rows only', () => {
  it('gives the same model, version included, whatever the validation rows are labelled', () => {
    const a = trainInhouseModel(rows(), { datasetSha256: sha256Hex(TEXT) }, OPTIONS).file;
    const flipped = rows().map((r) =>
      isHeldOut(r.cve, OPTIONS.validationPercent)
        ? { ...r, exploitation: r.exploitation === 'none' ? ('public_poc' as const) : ('none' as const) }
        : r,
    );
    const b = trainInhouseModel(flipped, { datasetSha256: sha256Hex(TEXT) }, OPTIONS).file;
    expect(b.version).toBe(a.version);
    const selection = a.body.training.selection as Selection;
    expect(selection.candidates).toHaveLength(SELECTION_ROUNDS.length * SELECTION_WEIGHTS.length);
    expect(selection.rows).toBe(a.body.training.trainRows);
  });

  it('ships the candidate with the largest smallest margin, the first one on ties', () => {
    const { file } = trainInhouseModel(rows(), { datasetSha256: sha256Hex(TEXT) }, OPTIONS);
    const selection = file.body.training.selection as Selection;
    const margins = selection.candidates.map((c) => c.margin ?? -Infinity);
    const first = selection.candidates[margins.indexOf(Math.max(...margins))];
    expect(selection.chosen).toEqual({ gbtRounds: first?.gbtRounds, elevatedWeight: first?.elevatedWeight });
    expect(file.body.stack?.elevatedWeight).toBe(first?.elevatedWeight);
    expect(file.body.stack?.boosters.exploitation.trees).toHaveLength(first?.gbtRounds ?? -1);
  });

  it('uses the options as given with selection off', () => {
    const options = { ...OPTIONS, select: 0, gbtRounds: 7, elevatedWeight: 1.3 };
    const { file } = trainInhouseModel(rows(), { datasetSha256: sha256Hex(TEXT) }, options);
    expect(file.body.training.selection).toBeUndefined();
    expect(file.body.stack?.elevatedWeight).toBe(1.3);
    expect(file.body.stack?.boosters.automatable.trees).toHaveLength(7);
    // Two classes: one tree a round.
    expect(file.body.stack?.boosters.automatable.trees[0]).toHaveLength(1);
    expect(file.body.stack?.boosters.exploitation.trees[0]).toHaveLength(3);
  });
});

describe("the heads' out-of-fold probabilities", () => {
  it("do not move when the fold's own text changes: the vocabulary is fitted without the fold too", () => {
    // A small vocabulary, so a term frequent in fold 0 alone would push another one out of it.
    const options = { ...OPTIONS, minDf: 2, maxVocab: 40 };
    const train = rows().filter((r) => !isHeldOut(r.cve, options.validationPercent));
    const inFold0 = train.map((r) => stackFold(r.cve, options.stackFolds) === 0);
    expect(inFold0.filter(Boolean).length).toBeGreaterThan(10);
    const marked = train.map((r, i) =>
      inFold0[i] ? { ...r, description: `${r.description} zzfoldword` } : r,
    );
    const before = outOfFoldStackInputs(train, options);
    const after = outOfFoldStackInputs(marked, options);
    train.forEach((_, i) => {
      // The heads' four probabilities (the text length may differ: the text did).
      if (inFold0[i]) expect(after[i]?.slice(0, 4)).toEqual(before[i]?.slice(0, 4));
    });
  });
});
