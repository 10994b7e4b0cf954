/**
 * Micro-bench of one in-house prediction in process (src/domain/inhouse/README.md#model):
 * `inhouseTriage` with the shipped model over the labelled sample, after a warm-up.
 *
 *   npx tsx bench/inhouse-predict.ts [--rounds N] [--model FILE]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseLabelledDataset } from '../src/domain/inhouse/dataset.js';
import { inhouseTriage } from '../src/domain/inhouse/model.js';
import { readInhouseModelFile } from '../src/domain/inhouse/model-file.js';
import { rowFeatureInput } from '../src/domain/inhouse/train.js';

const root = path.resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '500' }, model: { type: 'string' } },
});
const rounds = Number(values.rounds);
const model = readInhouseModelFile(values.model ?? path.join(root, 'config/inhouse-model.json'));
const rows = parseLabelledDataset(
  readFileSync(path.join(root, 'test/fixtures/inhouse/labelled-sample.csv'), 'utf8'),
);
const inputs = rows.map((r) => ({ ...rowFeatureInput(r), mission: 'medium' as const }));
for (const input of inputs) inhouseTriage(model, input);
const started = process.hrtime.bigint();
const cpu = process.cpuUsage();
let n = 0;
for (let i = 0; i < rounds; i++) {
  for (const input of inputs) {
    inhouseTriage(model, input);
    n++;
  }
}
const micros = Number(process.hrtime.bigint() - started) / 1000 / n;
const used = process.cpuUsage(cpu);
// CPU time beside wall time: on a shared machine the wall clock also counts time the process waited.
const cpuMicros = (used.user + used.system) / n;
console.log(
  `${n} predictions, ${micros.toFixed(1)} µs wall, ${cpuMicros.toFixed(1)} µs CPU a prediction ` +
    `(model ${model.version.slice(0, 19)}…)`,
);
