/**
 * Benchmark gate of the in-house model (docs/triage.md#in-house-model). Evaluates the exact current model
 * version on a labelled CSV (ssvc-vulnrichment format) and records the result.
 *
 *   npm run gate -- --dataset FILE [--training FILE] [--model FILE] [--config FILE] [--json]
 *   npm run gate -- --import FILE
 *
 * Scores the rows of FILE the model was not trained on (all of another file, the held-out split
 * of its own training file) and, given the training file (--training, or FILE itself when it is
 * that file), reports the time-ordered and verbatim-free figures beside them.
 *
 * The record goes to the database every process reads (table `inhouse_gate_records`): the one of
 * DATABASE_URL, or without it the embedded PostgreSQL of DATA_DIR, as `npm run admin` finds it.
 * `--import FILE` copies the records an earlier release kept in `DATA_DIR/inhouse-gate.json`.
 * Defaults: --model config/inhouse-model.json.gz, --config config/inhouse-gate.json (relative to the
 * project root). Exit codes: 0 passed (or imported), 1 failed (the record is still written),
 * 2 bad input or no database to record in.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, projectRoot } from '../lib/config.js';
import { describeError } from '../lib/error-text.js';
import { createLogger } from '../lib/logger.js';
import { openDatabaseOnly, type DatabaseOnly } from '../app/database.js';
import { sha256Hex } from '../domain/inhouse/canonical-json.js';
import { InhouseDatasetError, parseLabelledDataset } from '../domain/inhouse/dataset.js';
import type { LabelledRow } from '../domain/inhouse/dataset.js';
import { GateConfigError, parseGateThresholds, runGate, scoredRows } from '../domain/inhouse/gate.js';
import type { GateThresholds } from '../domain/inhouse/gate.js';
import { runGateStudies } from '../domain/inhouse/gate-studies.js';
import { modelTraining } from '../domain/inhouse/train.js';
import { gateJson, gateText } from './gate-report.js';
import {
  GateRecordImportError,
  importGateRecords,
  readGateRecordFile,
} from '../domain/inhouse/gate-record-import.js';
import { PgGateRecordStore } from '../domain/inhouse/pg-gate-record-store.js';
import { INHOUSE_MODEL_PATH, readInhouseModelFile } from '../domain/inhouse/model-file.js';
import { InhouseModelError } from '../domain/inhouse/model.js';
import type { InhouseModel } from '../domain/inhouse/model.js';

const DEFAULT_GATE_CONFIG_PATH = 'config/inhouse-gate.json';
const USAGE = [
  'usage: npm run gate -- --dataset FILE [--training FILE] [--model FILE] [--config FILE] [--json]',
  '       npm run gate -- --import FILE',
].join('\n');

class BadInput extends Error {}
/** No database to record in; unlike BadInput, the command line itself was right. */
class NoDatabase extends Error {}

interface GateArgs {
  dataset: string;
  /** The file the model was trained on, for the studies; defaults to `dataset` when it is that file. */
  training: string | undefined;
  model: string;
  config: string;
  json: boolean;
}

function parseCli(argv: string[]): GateArgs | { import: string } {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        dataset: { type: 'string' },
        training: { type: 'string' },
        import: { type: 'string' },
        model: { type: 'string' },
        config: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new BadInput((err as Error).message);
  }
  if (values.import !== undefined) {
    if (values.dataset) throw new BadInput('--import and --dataset do not go together');
    return { import: values.import };
  }
  if (!values.dataset)
    throw new BadInput('--dataset FILE is required (a CSV in the ssvc-vulnrichment format)');
  const fromRoot = (p: string): string => path.resolve(projectRoot, p);
  return {
    dataset: values.dataset,
    training: values.training,
    model: values.model ?? fromRoot(INHOUSE_MODEL_PATH),
    config: values.config ?? fromRoot(DEFAULT_GATE_CONFIG_PATH),
    json: values.json ?? false,
  };
}

interface GateInputs {
  model: InhouseModel;
  thresholds: GateThresholds;
  rows: LabelledRow[];
  datasetSha256: string;
  training: { rows: LabelledRow[]; sha256: string } | null;
}

function readDataset(file: string, label: string): { rows: LabelledRow[]; sha256: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new BadInput(`cannot read ${label} ${file}: ${(err as Error).message}`);
  }
  try {
    return { rows: parseLabelledDataset(text), sha256: sha256Hex(text) };
  } catch (err) {
    if (err instanceof InhouseDatasetError) throw new BadInput(`${label} ${file}: ${err.message}`);
    throw err;
  }
}

function loadInputs(args: GateArgs): GateInputs {
  const dataset = readDataset(args.dataset, 'dataset');
  let configJson: unknown;
  try {
    configJson = JSON.parse(readFileSync(args.config, 'utf8'));
  } catch (err) {
    throw new BadInput(`cannot read gate config ${args.config}: ${(err as Error).message}`);
  }
  let model: InhouseModel;
  let thresholds: GateThresholds;
  try {
    model = readInhouseModelFile(args.model);
    thresholds = parseGateThresholds(configJson);
  } catch (err) {
    if (err instanceof GateConfigError) throw new BadInput(`gate config ${args.config}: ${err.message}`);
    if (err instanceof InhouseModelError) throw new BadInput(err.message);
    throw err;
  }
  const trainedOn = modelTraining(model).datasetSha256;
  let training: GateInputs['training'] = null;
  if (args.training !== undefined) {
    const t = readDataset(args.training, 'training file');
    if (t.sha256 !== trainedOn) {
      throw new BadInput(
        `training file ${args.training} is not the file the model was trained on ` +
          `(sha256 ${t.sha256}; the model records ${trainedOn ?? 'none'})`,
      );
    }
    training = t;
  } else if (dataset.sha256 === trainedOn) {
    training = dataset;
  }
  return { model, thresholds, rows: dataset.rows, datasetSha256: dataset.sha256, training };
}

/**
 * The migrated database of this installation, or a BadInput naming why there is none: the
 * gate needs no key pepper, so DATABASE_URL alone is enough.
 */
async function openDatabase(): Promise<DatabaseOnly> {
  try {
    const config = loadConfig(process.env, { needsKeyPepper: false });
    const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
    return await openDatabaseOnly(config, logger);
  } catch (err) {
    const why = err instanceof ConfigError ? err.message : describeError(err);
    throw new NoDatabase(`no database to record in: ${why}`);
  }
}

async function withStore<T>(use: (store: PgGateRecordStore) => Promise<T>): Promise<T> {
  const db = await openDatabase();
  try {
    return await use(new PgGateRecordStore(db.pool));
  } finally {
    await db.close();
  }
}

async function importFile(file: string): Promise<number> {
  const records = await readGateRecordFile(file);
  const imported = await withStore((store) => importGateRecords(records, store));
  console.log(
    `imported ${imported} of ${records.length} record(s) from ${file} (${records.length - imported} already recorded)`,
  );
  return 0;
}

async function evaluate(args: GateArgs): Promise<number> {
  const inputs = loadInputs(args);
  const record = runGate(inputs.model, inputs.rows, inputs.thresholds, {
    sha256: inputs.datasetSha256,
    name: args.dataset,
  });
  const studies =
    inputs.training === null
      ? null
      : runGateStudies(
          inputs.model,
          inputs.training,
          scoredRows(inputs.model, inputs.rows, inputs.datasetSha256).rows,
        );
  await withStore((store) => store.append(record));
  if (args.json) {
    console.log(gateJson(record, studies));
    console.error('recorded in the database (inhouse_gate_records)');
  } else {
    console.log(gateText(record, studies));
    console.log('recorded in the database (inhouse_gate_records)');
  }
  return record.passed ? 0 : 1;
}

async function main(): Promise<number> {
  try {
    const args = parseCli(process.argv.slice(2));
    return 'import' in args ? await importFile(args.import) : await evaluate(args);
  } catch (err) {
    if (err instanceof GateRecordImportError || err instanceof NoDatabase) {
      console.error(`gate: ${err.message}`);
      return 2;
    }
    if (err instanceof BadInput) {
      console.error(`gate: ${err.message}`);
      console.error(USAGE);
      return 2;
    }
    console.error(`gate: ${describeError(err)}`);
    return 2;
  }
}

process.exitCode = await main();
