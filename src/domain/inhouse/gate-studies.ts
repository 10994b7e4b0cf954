import type { LabelledRow } from './dataset.js';
import { evaluateModel } from './evaluate.js';
import type { EvaluationMetrics } from './evaluate.js';
import { loadInhouseModel } from './model.js';
import type { InhouseModel } from './model.js';
import { splitByCve, splitByTime, withoutVerbatimDescriptions } from './split.js';
import { fitInhouseModel, modelTraining } from './train.js';

/**
 * What the gate reports beside its decision: how the model's recipe fares on splits of its
 * training file that flatter it less than a random one. Reported, not decided on.
 *
 * Glossary:
 * - **random split**: the validation slice by CVE-id hash the shipped model was held out from
 *   (`split.ts`); scored with the shipped weights themselves.
 * - **time-ordered split**: the newest 20% of the training file by CVE year and number, scored
 *   by the same recipe refitted (same options) on the older 80%.
 * - **without verbatim**: the scored rows minus those whose description appears verbatim in the
 *   trained-on rows of that split.
 */
export const TIME_ORDERED_PERCENT = 20;

export interface VerbatimFigures {
  /** Scored rows dropped because their description appears verbatim in the trained-on rows. */
  dropped: number;
  metrics: EvaluationMetrics;
}

export interface SplitFigures {
  /** How the split was made. */
  split: string;
  trainRows: number;
  /** The version of the model scored: the shipped one, or the one refitted on this split. */
  modelVersion: string;
  metrics: EvaluationMetrics;
  withoutVerbatim: VerbatimFigures;
}

export interface GateStudies {
  trainingSha256: string;
  randomSplit: SplitFigures;
  timeOrdered: SplitFigures;
  /** The gate's own scored rows minus those whose description the model was trained on. */
  underTestWithoutVerbatim: VerbatimFigures;
}

function verbatim(
  model: InhouseModel,
  scored: readonly LabelledRow[],
  trained: readonly LabelledRow[],
): VerbatimFigures {
  const kept = withoutVerbatimDescriptions(scored, trained);
  return { dropped: scored.length - kept.length, metrics: evaluateModel(model, kept) };
}

function figures(
  model: InhouseModel,
  split: string,
  parts: { train: LabelledRow[]; validation: LabelledRow[] },
): SplitFigures {
  return {
    split,
    trainRows: parts.train.length,
    modelVersion: model.version,
    metrics: evaluateModel(model, parts.validation),
    withoutVerbatim: verbatim(model, parts.validation, parts.train),
  };
}

/**
 * Runs the studies on `training`, the file `model` was trained on (the caller checks its
 * hash), and the verbatim filter on `underTest`, the rows the gate scored. Refits the model's
 * recipe once, on the time-ordered split: seconds on the full training file.
 */
export function runGateStudies(
  model: InhouseModel,
  training: { rows: readonly LabelledRow[]; sha256: string },
  underTest: readonly LabelledRow[],
): GateStudies {
  const recipe = modelTraining(model);
  const random = splitByCve(training.rows, recipe.options.validationPercent);
  const byTime = splitByTime(training.rows, TIME_ORDERED_PERCENT);
  const timeSplit = `newest ${TIME_ORDERED_PERCENT}% by CVE year and number`;
  const refitted = loadInhouseModel(
    fitInhouseModel(
      byTime.train,
      {
        datasetSha256: training.sha256,
        datasetRows: training.rows.length,
        validationRows: byTime.validation.length,
        validationSplit: timeSplit,
      },
      recipe.options,
    ),
  );
  return {
    trainingSha256: training.sha256,
    randomSplit: figures(model, recipe.validationSplit, random),
    timeOrdered: figures(refitted, timeSplit, byTime),
    underTestWithoutVerbatim: verbatim(model, underTest, random.train),
  };
}
