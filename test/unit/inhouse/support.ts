import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseLabelledDataset } from '../../../src/domain/inhouse/dataset.js';
import type { LabelledRow } from '../../../src/domain/inhouse/dataset.js';
import { FEATURE_SCHEMA } from '../../../src/domain/inhouse/features.js';
import type { Tree } from '../../../src/domain/inhouse/gbt.js';
import { parseGateThresholds } from '../../../src/domain/inhouse/gate.js';
import type { GateThresholds } from '../../../src/domain/inhouse/gate.js';
import { INHOUSE_MODEL_PATH, readInhouseModelFile } from '../../../src/domain/inhouse/model-file.js';
import { MODEL_SCHEMA, modelVersionOf } from '../../../src/domain/inhouse/model.js';
import type { InhouseModel, InhouseModelBody, InhouseModelFile } from '../../../src/domain/inhouse/model.js';
import { STACK_FEATURE_SCHEMA, STACK_FEATURES } from '../../../src/domain/inhouse/stack-features.js';

export const ROOT = path.resolve(import.meta.dirname, '../../..');
export const SHIPPED_MODEL_PATH = path.join(ROOT, INHOUSE_MODEL_PATH);
export const SAMPLE_CSV = path.join(ROOT, 'test/fixtures/inhouse/labelled-sample.csv');
export const SAMPLE_THRESHOLDS_PATH = path.join(ROOT, 'test/fixtures/inhouse/gate-thresholds-sample.json');

export function shippedModel(): InhouseModel {
  return readInhouseModelFile(SHIPPED_MODEL_PATH);
}

export function sampleRows(): LabelledRow[] {
  return parseLabelledDataset(readFileSync(SAMPLE_CSV, 'utf8'));
}

export function sampleThresholds(): GateThresholds {
  return parseGateThresholds(JSON.parse(readFileSync(SAMPLE_THRESHOLDS_PATH, 'utf8')));
}

/**
 * A model whose biases force exploitation none, automatable no, technical impact partial
 * whatever the input: SSVC Track for every row. With both KEV rules off every KEV row lands
 * below HIGH; with them on, KEV rows become active/no/partial (still Track at medium
 * mission) and the floor raises them to HIGH.
 */
export function forcedNonePartialFile(kevRules: boolean): InhouseModelFile {
  const body: InhouseModelBody = {
    schema: MODEL_SCHEMA,
    featureSchema: FEATURE_SCHEMA,
    features: ['kev', 'cvss:score'],
    heads: {
      exploitation: {
        bias: [20, 0, 0],
        weights: [
          [0, 0],
          [0, 0],
          [0, 0],
        ],
      },
      automatable: {
        bias: [20, 0],
        weights: [
          [0, 0],
          [0, 0],
        ],
      },
      technicalImpact: {
        bias: [20, 0],
        weights: [
          [0, 0],
          [0, 0],
        ],
      },
    },
    rules: { kevImpliesActive: kevRules, kevPriorityFloor: kevRules },
    training: { note: 'test model: forced none/no/partial' },
  };
  return { version: modelVersionOf(body), body };
}

/**
 * A model whose stacked stage answers the same for every input: exploitation none 0.6 / poc 0.4,
 * automatable yes, technical impact total (single-leaf trees, all in the base scores).
 */
export function stackedFile(elevatedWeight: number): InhouseModelFile {
  const leaf = (): Tree => ({ f: [-1], t: [0], l: [-1], r: [-1], v: [0] });
  const file = forcedNonePartialFile(true);
  file.body.stack = {
    featureSchema: STACK_FEATURE_SCHEMA,
    features: [...STACK_FEATURES],
    boosters: {
      exploitation: { base: [Math.log(0.6), Math.log(0.4), -30], trees: [[leaf(), leaf(), leaf()]] },
      automatable: { base: [-30, 0], trees: [[leaf(), leaf()]] },
      technicalImpact: { base: [-30, 0], trees: [[leaf(), leaf()]] },
    },
    elevatedWeight,
  };
  return { version: modelVersionOf(file.body), body: file.body };
}
