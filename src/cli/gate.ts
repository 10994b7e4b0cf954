/**
 * Benchmark gate of the in-house model (docs/triage.md#in-house-model). Evaluates the exact current model
 * version on a labelled CSV (ssvc-vulnrichment format) and records the result.
 *
 *   npm run gate -- --dataset FILE [--record FILE] [--model FILE] [--config FILE] [--json]
 *
 * Defaults: --record .data/inhouse-gate.json, --model config/inhouse-model.json,
 * --config config/inhouse-gate.json (all relative to the project root).
 * Exit codes: 0 passed, 1 failed (the record is still written), 2 bad input.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from '../lib/config.js';
import { sha256Hex } from '../domain/inhouse/canonical-json.js';
import { InhouseDatasetError, parseLabelledDataset } from '../domain/inhouse/dataset.js';
import type { LabelledRow } from '../domain/inhouse/dataset.js';
import { GateConfigError, parseGateThresholds, runGate } from '../domain/inhouse/gate.js';
import type { GateRecord, GateThresholds } from '../domain/inhouse/gate.js';
import { FileGateRecordStore } from '../domain/inhouse/gate-record-store.js';
import { INHOUSE_MODEL_PATH, readInhouseModelFile } from '../domain/inhouse/model-file.js';
import { InhouseModelError } from '../domain/inhouse/model.js';
import type { InhouseModel } from '../domain/inhouse/model.js';

const DEFAULT_RECORD_PATH = '.data/inhouse-gate.json';
const DEFAULT_GATE_CONFIG_PATH = 'config/inhouse-gate.json';

class BadInput extends Error {}

function parseCli(argv: string[]): {
  dataset: string;
  record: string;
  model: string;
  config: string;
  json: boolean;
} {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        dataset: { type: 'string' },
        record: { type: 'string' },
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
  if (!values.dataset)
    throw new BadInput('--dataset FILE is required (a CSV in the ssvc-vulnrichment format)');
  const fromRoot = (p: string): string => path.resolve(projectRoot, p);
  return {
    dataset: values.dataset,
    record: values.record ?? fromRoot(DEFAULT_RECORD_PATH),
    model: values.model ?? fromRoot(INHOUSE_MODEL_PATH),
    config: values.config ?? fromRoot(DEFAULT_GATE_CONFIG_PATH),
    json: values.json ?? false,
  };
}

function loadInputs(args: ReturnType<typeof parseCli>): {
  model: InhouseModel;
  thresholds: GateThresholds;
  rows: LabelledRow[];
  datasetSha256: string;
} {
  let text: string;
  try {
    text = readFileSync(args.dataset, 'utf8');
  } catch (err) {
    throw new BadInput(`cannot read dataset ${args.dataset}: ${(err as Error).message}`);
  }
  let configJson: unknown;
  try {
    configJson = JSON.parse(readFileSync(args.config, 'utf8'));
  } catch (err) {
    throw new BadInput(`cannot read gate config ${args.config}: ${(err as Error).message}`);
  }
  try {
    return {
      model: readInhouseModelFile(args.model),
      thresholds: parseGateThresholds(configJson),
      rows: parseLabelledDataset(text),
      datasetSha256: sha256Hex(text),
    };
  } catch (err) {
    if (err instanceof InhouseDatasetError) throw new BadInput(`dataset ${args.dataset}: ${err.message}`);
    if (err instanceof GateConfigError) throw new BadInput(`gate config ${args.config}: ${err.message}`);
    if (err instanceof InhouseModelError) throw new BadInput(err.message);
    throw err;
  }
}

function printSummary(r: GateRecord): void {
  const pct = (x: number | null): string => (x === null ? 'n/a' : `${(x * 100).toFixed(2)}%`);
  const m = r.metrics;
  console.log(`model     ${r.modelVersion}`);
  console.log(`dataset   ${r.datasetName} (sha256 ${r.datasetSha256}, ${m.rows} rows)`);
  console.log(
    `agreement ${pct(m.agreement)} (min ${pct(r.thresholds.minAgreement)}; majority baseline ${pct(m.majorityBaselineAgreement)})`,
  );
  console.log(`elevated  ${pct(m.elevatedAgreement)} (min ${pct(r.thresholds.minElevatedAgreement)})`);
  console.log(
    `accuracy  exploitation ${pct(m.accuracy.exploitation)}, automatable ${pct(m.accuracy.automatable)}, technical impact ${pct(m.accuracy.technicalImpact)}`,
  );
  console.log(`KEV floor ${m.kevFloorViolations} violation(s) in ${m.kevRows} KEV row(s)`);
  console.log(r.passed ? 'PASS' : `FAIL\n  - ${r.failures.join('\n  - ')}`);
}

async function main(): Promise<number> {
  let args;
  let inputs;
  try {
    args = parseCli(process.argv.slice(2));
    inputs = loadInputs(args);
  } catch (err) {
    if (err instanceof BadInput) {
      console.error(`gate: ${err.message}`);
      console.error(
        'usage: npm run gate -- --dataset FILE [--record FILE] [--model FILE] [--config FILE] [--json]',
      );
      return 2;
    }
    throw err;
  }
  const record = runGate(inputs.model, inputs.rows, inputs.thresholds, {
    sha256: inputs.datasetSha256,
    name: args.dataset,
  });
  try {
    await new FileGateRecordStore(args.record).append(record);
  } catch (err) {
    console.error(`gate: cannot write record ${args.record}: ${(err as Error).message}`);
    return 2;
  }
  if (args.json) {
    console.log(JSON.stringify(record, null, 2));
    console.error(`recorded in ${args.record}`);
  } else {
    printSummary(record);
    console.log(`recorded in ${args.record}`);
  }
  return record.passed ? 0 : 1;
}

process.exitCode = await main();
