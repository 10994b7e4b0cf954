/**
 * Micro-bench of one in-house prediction in process (src/domain/inhouse/README.md#prediction-time):
 * `inhouseTriage` with the shipped model over the labelled sample, after a warm-up, beside two
 * baselines measured in the same run and interleaved with it (so machine load hits all three
 * alike): the decision points alone (no answer, no reasoning text), the same computed the way
 * they were before the compiled predictor (named features and trees as objects, kept in
 * `test/unit/inhouse/reference-predict.ts` for the equivalence test), and the text heads alone.
 *
 *   npx tsx bench/inhouse-predict.ts [--rounds N] [--model FILE]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseLabelledDataset } from '../src/domain/inhouse/dataset.js';
import { inhouseTriage, predictDecisionPoints, textHeadProbabilities } from '../src/domain/inhouse/model.js';
import type { InhouseTriageInput } from '../src/domain/inhouse/model.js';
import { INHOUSE_MODEL_PATH, readInhouseModelFile } from '../src/domain/inhouse/model-file.js';
import { rowFeatureInput } from '../src/domain/inhouse/train.js';
import { referencePredictDecisionPoints } from '../test/unit/inhouse/reference-predict.js';

const root = path.resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '500' }, model: { type: 'string' } },
});
const rounds = Number(values.rounds);
const model = readInhouseModelFile(values.model ?? path.join(root, INHOUSE_MODEL_PATH));
const rows = parseLabelledDataset(
  readFileSync(path.join(root, 'test/fixtures/inhouse/labelled-sample.csv'), 'utf8'),
);
const inputs: InhouseTriageInput[] = rows.map((r) => ({ ...rowFeatureInput(r), mission: 'medium' }));

const cases: [string, (input: InhouseTriageInput) => unknown][] = [
  ['inhouseTriage (answer)', (input) => inhouseTriage(model, input)],
  ['decision points only', (input) => predictDecisionPoints(model, input)],
  ['decision points, before', (input) => referencePredictDecisionPoints(model, input)],
  ['text heads only', (input) => textHeadProbabilities(model, input)],
];
for (const [, run] of cases) for (let i = 0; i < 50; i++) for (const input of inputs) run(input);

// Blocks of 10 rounds, the cases taking turns, so load on a shared machine falls on all of them.
const cpu = new Map<string, number>();
const wall = new Map<string, number>();
for (let done = 0; done < rounds; done += 10) {
  for (const [name, run] of cases) {
    const started = process.hrtime.bigint();
    const before = process.cpuUsage();
    for (let r = 0; r < 10; r++) for (const input of inputs) run(input);
    const used = process.cpuUsage(before);
    wall.set(name, (wall.get(name) ?? 0) + Number(process.hrtime.bigint() - started) / 1000);
    cpu.set(name, (cpu.get(name) ?? 0) + used.user + used.system);
  }
}
const n = Math.ceil(rounds / 10) * 10 * inputs.length;
console.log(`${n} predictions each, model ${model.version.slice(0, 19)}…`);
// CPU time beside wall time: on a shared machine the wall clock also counts time the process waited.
for (const [name] of cases) {
  console.log(
    `  ${name.padEnd(28)} ${((cpu.get(name) ?? 0) / n).toFixed(1).padStart(6)} µs CPU  ` +
      `${((wall.get(name) ?? 0) / n).toFixed(1).padStart(6)} µs wall a prediction`,
  );
}
