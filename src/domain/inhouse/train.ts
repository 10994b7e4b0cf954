import { InhouseDatasetError } from './dataset.js';
import type { LabelledRow } from './dataset.js';
import { evaluateModel } from './evaluate.js';
import type { EvaluationMetrics } from './evaluate.js';
import {
  extractFeatures,
  FEATURE_SCHEMA,
  rowFeatureInput,
  structuredFeatures,
  textTerms,
} from './features.js';
import { trainSoftmax } from './logreg.js';
import type { LogregOptions, SparseRow } from './logreg.js';
import { sha256Hex } from './canonical-json.js';
import { DEFAULT_GBT_OPTIONS, trainBooster } from './gbt.js';
import type { Booster, GbtOptions } from './gbt.js';
import {
  HEAD_CLASSES,
  HEAD_NAMES,
  loadInhouseModel,
  MODEL_SCHEMA,
  modelVersionOf,
  stackInput,
  textHeadProbabilities,
} from './model.js';
import type {
  HeadName,
  HeadWeights,
  InhouseModel,
  InhouseModelBody,
  InhouseModelFile,
  InhouseStack,
} from './model.js';
import { STACK_FEATURE_SCHEMA, STACK_FEATURES } from './stack-features.js';
import { selectByCrossValidation } from './selection.js';
import type { Selection } from './selection.js';
import { splitByCve } from './split.js';

export interface TrainOptions extends LogregOptions {
  /** Share of CVEs (by id hash) held out for validation, in percent. @defaultValue 20 */
  validationPercent: number;
  /** A text term enters the vocabulary only if this many training rows contain it. @defaultValue 2 */
  minDf: number;
  /** Largest vocabulary, most frequent terms first. @defaultValue 40000 */
  maxVocab: number;
  /** Decimal places weights are rounded to in the model file. @defaultValue 5 */
  weightDecimals: number;
  /** Folds of the heads' out-of-fold probabilities the stacked trees learn from; 0: no stacked stage. @defaultValue 5 */
  stackFolds: number;
  /** Boosting rounds of each decision point's trees, when not selected. @defaultValue 60 */
  gbtRounds: number;
  /** Largest depth of a tree. @defaultValue 3 */
  gbtDepth: number;
  /** Shrinkage of every tree. @defaultValue 0.1 */
  gbtShrinkage: number;
  /** Weight of the outcomes above Track when the stacked model chooses one (`stack.elevatedWeight`), when not selected. @defaultValue 2 */
  elevatedWeight: number;
  /**
   * 1: choose `gbtRounds` and `elevatedWeight` by cross-validating the stacked stage over the
   * trained-on rows (`selection.ts`); 0: use the two options as given. @defaultValue 1
   */
  select: number;
  /** The gate's lines the selection aims to clear (`selection.ts`). @defaultValue 0.02, 0.6, 0.65 */
  selectAgreementGain: number;
  selectElevatedRecall: number;
  selectNonTrackPrecision: number;
}

export const DEFAULT_TRAIN_OPTIONS: Readonly<TrainOptions> = Object.freeze({
  seed: 20261121,
  epochs: 30,
  batchSize: 256,
  learningRate: 0.05,
  l2: 3e-4,
  validationPercent: 20,
  minDf: 2,
  maxVocab: 40000,
  weightDecimals: 5,
  stackFolds: 5,
  gbtRounds: 60,
  gbtDepth: DEFAULT_GBT_OPTIONS.depth,
  gbtShrinkage: DEFAULT_GBT_OPTIONS.shrinkage,
  elevatedWeight: 2,
  select: 1,
  selectAgreementGain: 0.02,
  selectElevatedRecall: 0.6,
  selectNonTrackPrecision: 0.65,
});

export interface TrainReport {
  trainRows: number;
  validationRows: number;
  features: number;
  train: EvaluationMetrics;
  validation: EvaluationMetrics;
}

export { rowFeatureInput };

/**
 * Feature names in a fixed order: every structured feature seen in training (sorted),
 * then text terms by descending document frequency, ties alphabetical.
 */
export function buildFeatureNames(train: readonly LabelledRow[], minDf: number, maxVocab: number): string[] {
  const structured = new Set<string>();
  const df = new Map<string, number>();
  for (const row of train) {
    const input = rowFeatureInput(row);
    for (const name of structuredFeatures(input).names) structured.add(name);
    for (const term of textTerms(input.text)) df.set(term, (df.get(term) ?? 0) + 1);
  }
  const vocab = [...df.entries()]
    .filter(([, n]) => n >= minDf)
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, maxVocab)
    .map(([term]) => `t:${term}`);
  return [...[...structured].sort(), ...vocab];
}

function labelOf(row: LabelledRow, head: HeadName): number {
  const value =
    head === 'exploitation'
      ? row.exploitation
      : head === 'automatable'
        ? row.automatable
        : row.technicalImpact;
  return (HEAD_CLASSES[head] as readonly string[]).indexOf(value);
}

/** How the trained-on rows were chosen, recorded in the model body. */
export interface TrainingProvenance {
  datasetSha256: string;
  datasetRows: number;
  validationRows: number;
  validationSplit: string;
}

/**
 * Fits the three heads on exactly `train` and returns the model file. Used by
 * {@link trainInhouseModel} and by the gate, which refits the same recipe on a time-ordered
 * split. Same rows and options: byte-identical file.
 */
export function fitInhouseModel(
  train: readonly LabelledRow[],
  provenance: TrainingProvenance,
  options: TrainOptions = DEFAULT_TRAIN_OPTIONS,
): InhouseModelFile {
  if (train.length === 0) {
    throw new InhouseDatasetError(
      'no training rows left after the validation split (try --validation-percent 0)',
    );
  }
  const { body, selection } = fitBody(train, options);
  body.training = {
    datasetSha256: provenance.datasetSha256,
    datasetRows: provenance.datasetRows,
    trainRows: train.length,
    validationRows: provenance.validationRows,
    validationSplit: provenance.validationSplit,
    options: { ...options },
    ...(selection ? { selection } : {}),
  };
  return {
    $comment:
      'In-house SSVC triage model (src/domain/inhouse/README.md). Written by src/cli/train-inhouse.ts; never edit by hand: version is the sha256 of the canonical JSON of body.',
    version: modelVersionOf(body),
    body,
  };
}

/** Vocabulary, heads and (with `stackFolds`) the stacked stage on exactly `train`, with these options. */
function fitBody(
  train: readonly LabelledRow[],
  options: TrainOptions,
): { body: InhouseModelBody; selection: Selection | null } {
  const features = buildFeatureNames(train, options.minDf, options.maxVocab);
  const stacked = options.stackFolds > 0 ? fitStack(train, options) : null;
  return {
    body: {
      schema: MODEL_SCHEMA,
      featureSchema: FEATURE_SCHEMA,
      features,
      heads: fitHeads(train, features, options),
      rules: { kevImpliesActive: true, kevPriorityFloor: true },
      ...(stacked ? { stack: stacked.stack } : {}),
      training: {},
    },
    selection: stacked?.selection ?? null,
  };
}

/** The fold (of `folds`) a CVE's row falls in for the out-of-fold probabilities: another slice of its id's hash than the validation split's. */
export function stackFold(cve: string, folds: number): number {
  return parseInt(sha256Hex(cve).slice(8, 16), 16) % folds;
}

/** A model of the heads alone, for computing their probabilities inside training. */
function headsOnly(features: string[], heads: Record<HeadName, HeadWeights>): InhouseModel {
  const body: InhouseModelBody = {
    schema: MODEL_SCHEMA,
    featureSchema: FEATURE_SCHEMA,
    features,
    heads,
    rules: { kevImpliesActive: false, kevPriorityFloor: false },
    training: {},
  };
  return { version: 'training', body, featureIndex: new Map(features.map((f, i) => [f, i])) };
}

/**
 * The stacked stage: each training row's heads' probabilities come from heads fitted without its
 * fold (out of fold), so the trees learn how far to trust the heads on rows they did not see, as
 * at triage time; then one booster per decision point on those and the dense features.
 */
/**
 * The stacked stage's input of every training row, its heads' probabilities out of fold: from a
 * vocabulary and heads fitted without the row's fold, so no term is in the vocabulary, and no
 * weight was learned, because of the row's own text or label.
 */
export function outOfFoldStackInputs(train: readonly LabelledRow[], options: TrainOptions): number[][] {
  const x: number[][] = new Array<number[]>(train.length);
  const fold = train.map((row) => stackFold(row.cve, options.stackFolds));
  for (let k = 0; k < options.stackFolds; k++) {
    const inFold = train.filter((_, i) => fold[i] !== k);
    const foldFeatures = buildFeatureNames(inFold, options.minDf, options.maxVocab);
    const model = headsOnly(foldFeatures, fitHeads(inFold, foldFeatures, options));
    train.forEach((row, i) => {
      if (fold[i] !== k) return;
      const input = rowFeatureInput(row);
      x[i] = stackInput(input, textHeadProbabilities(model, input));
    });
  }
  return x;
}

function fitStack(
  train: readonly LabelledRow[],
  options: TrainOptions,
): { stack: InhouseStack; selection: Selection | null } {
  const fold = train.map((row) => stackFold(row.cve, options.stackFolds));
  const x = outOfFoldStackInputs(train, options);
  const labels = Object.fromEntries(
    HEAD_NAMES.map((head) => [head, train.map((row) => labelOf(row, head))]),
  ) as Record<HeadName, number[]>;
  const gbt: GbtOptions = {
    ...DEFAULT_GBT_OPTIONS,
    rounds: options.gbtRounds,
    depth: options.gbtDepth,
    shrinkage: options.gbtShrinkage,
  };
  const selection =
    options.select > 0 && options.stackFolds > 1
      ? selectByCrossValidation({
          rows: train,
          x,
          labels,
          fold,
          folds: options.stackFolds,
          foldRule: `folds sha256(cve)[8:16] mod ${options.stackFolds}, as the heads' out-of-fold probabilities`,
          gbt,
          targets: {
            agreementGain: options.selectAgreementGain,
            elevatedRecall: options.selectElevatedRecall,
            nonTrackPrecision: options.selectNonTrackPrecision,
          },
        })
      : null;
  const rounds = selection?.chosen.gbtRounds ?? options.gbtRounds;
  const boosters = {} as Record<HeadName, Booster>;
  for (const head of HEAD_NAMES) {
    boosters[head] = trainBooster(x, labels[head], HEAD_CLASSES[head].length, { ...gbt, rounds });
  }
  return {
    stack: {
      featureSchema: STACK_FEATURE_SCHEMA,
      features: [...STACK_FEATURES],
      boosters,
      elevatedWeight: selection?.chosen.elevatedWeight ?? options.elevatedWeight,
    },
    selection,
  };
}

/** The three logistic-regression heads fitted on `train` over `features`. */
function fitHeads(
  train: readonly LabelledRow[],
  features: string[],
  options: TrainOptions,
): Record<HeadName, HeadWeights> {
  const index = new Map(features.map((f, i) => [f, i]));
  const sparse: SparseRow[] = train.map((row) => {
    const f = extractFeatures(rowFeatureInput(row));
    const out: SparseRow = { idx: [], val: [] };
    f.names.forEach((name, j) => {
      const i = index.get(name);
      if (i !== undefined) {
        out.idx.push(i);
        out.val.push(f.values[j] as number);
      }
    });
    return out;
  });
  const scale = 10 ** options.weightDecimals;
  const round = (x: number): number => Math.round(x * scale) / scale + 0;
  const heads = {} as Record<HeadName, HeadWeights>;
  for (const head of HEAD_NAMES) {
    const labels = train.map((row) => labelOf(row, head));
    const w = trainSoftmax(sparse, labels, features.length, HEAD_CLASSES[head].length, options);
    heads[head] = { bias: w.bias.map(round), weights: w.weights.map((r) => r.map(round)) };
  }
  return heads;
}

/**
 * Trains the model on the rows outside the validation slice and evaluates it on both
 * sides. The shipped model is the one trained here, so the validation figures describe
 * exactly the weights in the file. Same rows and options: byte-identical file.
 */
export function trainInhouseModel(
  rows: readonly LabelledRow[],
  meta: { datasetSha256: string },
  options: TrainOptions = DEFAULT_TRAIN_OPTIONS,
): { file: InhouseModelFile; report: TrainReport } {
  const { train, validation } = splitByCve(rows, options.validationPercent);
  const file = fitInhouseModel(
    train,
    {
      datasetSha256: meta.datasetSha256,
      datasetRows: rows.length,
      validationRows: validation.length,
      validationSplit: `sha256(cve)[0:8] mod 100 < ${options.validationPercent}`,
    },
    options,
  );
  const model = loadInhouseModel(file);
  return {
    file,
    report: {
      trainRows: train.length,
      validationRows: validation.length,
      features: file.body.features.length,
      train: evaluateModel(model, train),
      validation: evaluateModel(model, validation),
    },
  };
}

/** What a model file records about its training, with defaults for what it leaves out. */
export interface ModelTraining {
  /** SHA-256 of the file it was trained on; null when the model does not say. */
  datasetSha256: string | null;
  validationSplit: string;
  /** The options it was trained with, so the gate can refit the same recipe. */
  options: TrainOptions;
}

export function modelTraining(model: InhouseModel): ModelTraining {
  const t = model.body.training;
  const given = (typeof t.options === 'object' && t.options !== null ? t.options : {}) as Record<
    string,
    unknown
  >;
  const options = { ...DEFAULT_TRAIN_OPTIONS };
  for (const key of Object.keys(options) as (keyof TrainOptions)[]) {
    const v = given[key];
    if (typeof v === 'number' && Number.isFinite(v)) options[key] = v;
  }
  return {
    datasetSha256: typeof t.datasetSha256 === 'string' ? t.datasetSha256 : null,
    validationSplit:
      typeof t.validationSplit === 'string'
        ? t.validationSplit
        : `sha256(cve)[0:8] mod 100 < ${options.validationPercent}`,
    options,
  };
}
