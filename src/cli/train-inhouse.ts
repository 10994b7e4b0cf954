/**
 * Trains the in-house SSVC model and writes `config/inhouse-model.json.gz`.
 *
 *   npx tsx src/cli/train-inhouse.ts --dataset FILE [--out FILE] [--report FILE]
 *     [--epochs N] [--l2 X] [--learning-rate X] [--min-df N] [--max-vocab N]
 *     [--stack-folds N] [--gbt-rounds N] [--gbt-depth N] [--gbt-shrinkage X] [--elevated-weight X]
 *     [--validation-percent N] [--select 0|1] [--dry-run]
 *
 * --out defaults to config/inhouse-model.json.gz under the project root (gzip when it ends in .gz); --report writes the
 * train/validation metrics as JSON. Training data is only ever read from --dataset.
 * --gbt-rounds and --elevated-weight are chosen by cross-validation on the training rows unless
 * --select 0 (src/domain/inhouse/README.md#model-selection).
 *
 * Deterministic: same dataset and options give a byte-identical model file and version.
 * Exit codes: 0 written, 2 bad input.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from '../lib/config.js';
import { sha256Hex } from '../domain/inhouse/canonical-json.js';
import { InhouseDatasetError, parseLabelledDataset } from '../domain/inhouse/dataset.js';
import type { EvaluationMetrics } from '../domain/inhouse/evaluate.js';
import { INHOUSE_MODEL_PATH, writeInhouseModelFile } from '../domain/inhouse/model-file.js';
import { DEFAULT_TRAIN_OPTIONS, trainInhouseModel } from '../domain/inhouse/train.js';
import type { TrainOptions } from '../domain/inhouse/train.js';
import type { Selection } from '../domain/inhouse/selection.js';

function fail(message: string): never {
  console.error(`train-inhouse: ${message}`);
  process.exit(2);
}

function numberOption(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) fail(`--${name} must be a non-negative number, got "${value}"`);
  return n;
}

function summary(label: string, m: EvaluationMetrics): string {
  const pct = (x: number | null): string => (x === null ? 'n/a' : `${(x * 100).toFixed(2)}%`);
  return (
    `${label}: rows ${m.rows}, SSVC agreement ${pct(m.agreement)} (majority baseline ${pct(m.majorityBaselineAgreement)}), ` +
    `elevated recall ${pct(m.elevatedRecall)}, non-Track precision ${pct(m.nonTrackPrecision)}, exploitation ${pct(m.accuracy.exploitation)}, ` +
    `automatable ${pct(m.accuracy.automatable)}, technical impact ${pct(m.accuracy.technicalImpact)}, ` +
    `KEV floor violations ${m.kevFloorViolations}/${m.kevRows}`
  );
}

function main(): void {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        dataset: { type: 'string' },
        out: { type: 'string', default: path.join(projectRoot, INHOUSE_MODEL_PATH) },
        report: { type: 'string' },
        epochs: { type: 'string' },
        l2: { type: 'string' },
        'learning-rate': { type: 'string' },
        'min-df': { type: 'string' },
        'max-vocab': { type: 'string' },
        'validation-percent': { type: 'string' },
        'stack-folds': { type: 'string' },
        'gbt-rounds': { type: 'string' },
        'gbt-depth': { type: 'string' },
        'gbt-shrinkage': { type: 'string' },
        'elevated-weight': { type: 'string' },
        select: { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (err) {
    fail((err as Error).message);
  }
  if (!values.dataset) fail('--dataset FILE is required (a CSV in the ssvc-vulnrichment format)');
  let text: string;
  try {
    text = readFileSync(values.dataset, 'utf8');
  } catch (err) {
    fail(`cannot read ${values.dataset}: ${(err as Error).message}`);
  }
  let rows;
  try {
    rows = parseLabelledDataset(text);
  } catch (err) {
    if (err instanceof InhouseDatasetError) fail(`${values.dataset}: ${err.message}`);
    throw err;
  }
  const d = DEFAULT_TRAIN_OPTIONS;
  const options: TrainOptions = {
    ...d,
    epochs: numberOption(values.epochs, 'epochs', d.epochs),
    l2: numberOption(values.l2, 'l2', d.l2),
    learningRate: numberOption(values['learning-rate'], 'learning-rate', d.learningRate),
    minDf: numberOption(values['min-df'], 'min-df', d.minDf),
    maxVocab: numberOption(values['max-vocab'], 'max-vocab', d.maxVocab),
    validationPercent: numberOption(values['validation-percent'], 'validation-percent', d.validationPercent),
    stackFolds: numberOption(values['stack-folds'], 'stack-folds', d.stackFolds),
    gbtRounds: numberOption(values['gbt-rounds'], 'gbt-rounds', d.gbtRounds),
    gbtDepth: numberOption(values['gbt-depth'], 'gbt-depth', d.gbtDepth),
    gbtShrinkage: numberOption(values['gbt-shrinkage'], 'gbt-shrinkage', d.gbtShrinkage),
    elevatedWeight: numberOption(values['elevated-weight'], 'elevated-weight', d.elevatedWeight),
    select: numberOption(values.select, 'select', d.select),
  };
  const started = Date.now();
  let trained;
  try {
    trained = trainInhouseModel(rows, { datasetSha256: sha256Hex(text) }, options);
  } catch (err) {
    if (err instanceof InhouseDatasetError) fail(`${values.dataset}: ${err.message}`);
    throw err;
  }
  const { file, report } = trained;
  console.log(`trained in ${((Date.now() - started) / 1000).toFixed(1)}s, ${report.features} features`);
  console.log(summary('train     ', report.train));
  console.log(summary('validation', report.validation));
  const selection = file.body.training.selection as Selection | undefined;
  if (selection) {
    const pct = (x: number | null): string =>
      x === null ? '   n/a' : `${(x * 100).toFixed(2)}%`.padStart(7);
    console.log(`selection by ${selection.split}, ${selection.rows} rows:`);
    console.log('  rounds  weight  agreement  baseline  elevated  non-Track   margin');
    for (const c of selection.candidates) {
      const mark =
        c.gbtRounds === selection.chosen.gbtRounds && c.elevatedWeight === selection.chosen.elevatedWeight
          ? '  <- chosen'
          : '';
      console.log(
        `  ${String(c.gbtRounds).padStart(6)}  ${c.elevatedWeight.toFixed(2).padStart(6)}  ${pct(c.agreement).padStart(9)}  ` +
          `${pct(c.majorityBaseline).padStart(8)}  ${pct(c.elevatedRecall).padStart(8)}  ${pct(c.nonTrackPrecision).padStart(9)}  ` +
          `${c.margin === null ? '    n/a' : (c.margin * 100).toFixed(2).padStart(7)}${mark}`,
      );
    }
  }
  if (values.report)
    writeFileSync(values.report, `${JSON.stringify({ version: file.version, ...report }, null, 2)}\n`);
  if (values['dry-run']) return;
  writeInhouseModelFile(values.out, file);
  console.log(`wrote ${values.out} version ${file.version}`);
}

main();
