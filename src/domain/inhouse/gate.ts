import { canonicalJson, sha256Hex } from './canonical-json.js';
import type { LabelledRow } from './dataset.js';
import { evaluateModel } from './evaluate.js';
import type { EvaluationMetrics } from './evaluate.js';
import type { InhouseModel } from './model.js';
import { splitByCve } from './split.js';
import { modelTraining } from './train.js';

/**
 * The benchmark gate of the in-house model (docs/triage.md#in-house-model): the exact model
 * version is run over a labelled file and passes only if every threshold holds AND no
 * KEV-tagged row is answered below HIGH. The KEV condition is not configurable.
 *
 * Thresholds come from `config/inhouse-gate.json`; every field is required so that a
 * typo cannot silently disable a check.
 */
export interface GateThresholds {
  /**
   * Smallest margin of agreement over the majority-class baseline of the scored rows (the
   * agreement of answering their most common outcome for every row). A margin rather than an
   * absolute figure: answering Track for everything already agrees on ~92% of CVEs.
   */
  minAgreementOverBaseline: number;
  /** Smallest share of rows labelled Track*, Attend or Act that get exactly their outcome. */
  minElevatedRecall: number;
  /** Smallest share of answers above Track whose labelled outcome is exactly that answer. */
  minNonTrackPrecision: number;
  /** Smallest per-decision-point accuracy. */
  minAccuracy: { exploitation: number; automatable: number; technicalImpact: number };
  /** Fewest rows a dataset must have for a result to count. */
  minRows: number;
}

/** The figures a gate run decides on: the model's metrics over the scored rows, and which rows. */
export interface GateMetrics extends EvaluationMetrics {
  /** Rows in the file under test; `rows` is how many of them were scored. */
  datasetRows: number;
  /** Which rows were scored and why (all, or only those the model was not trained on). */
  scope: string;
}

export interface GateRecord {
  modelVersion: string;
  datasetSha256: string;
  /** As given on the command line; informational only, the hash identifies the data. */
  datasetName: string;
  thresholds: GateThresholds;
  metrics: GateMetrics;
  passed: boolean;
  /** One line per failed condition; empty when passed. */
  failures: string[];
  /** ISO 8601 UTC. */
  evaluatedAt: string;
}

export class GateConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GateConfigError';
  }
}

function share(value: unknown, name: string): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
    throw new GateConfigError(`${name} must be a number in [0, 1], got ${JSON.stringify(value)}`);
  }
  return value;
}

const THRESHOLD_KEYS = new Set([
  '$comment',
  'minAgreementOverBaseline',
  'minElevatedRecall',
  'minNonTrackPrecision',
  'minAccuracy',
  'minRows',
]);

/**
 * Validates the parsed `config/inhouse-gate.json`. Unknown keys are refused too: a threshold
 * of an earlier release (`minAgreement`) left in the file would otherwise look like a check.
 */
export function parseGateThresholds(json: unknown): GateThresholds {
  const c = (json ?? {}) as Record<string, unknown>;
  const unknown = Object.keys(c).filter((k) => !THRESHOLD_KEYS.has(k));
  if (unknown.length > 0) throw new GateConfigError(`unknown threshold(s) ${unknown.join(', ')}`);
  const acc = (c.minAccuracy ?? {}) as Record<string, unknown>;
  if (typeof c.minAccuracy !== 'object' || c.minAccuracy === null) {
    throw new GateConfigError('minAccuracy must be an object {exploitation, automatable, technicalImpact}');
  }
  if (typeof c.minRows !== 'number' || !Number.isInteger(c.minRows) || c.minRows < 1) {
    throw new GateConfigError(`minRows must be a positive integer, got ${JSON.stringify(c.minRows)}`);
  }
  return {
    minAgreementOverBaseline: share(c.minAgreementOverBaseline, 'minAgreementOverBaseline'),
    minElevatedRecall: share(c.minElevatedRecall, 'minElevatedRecall'),
    minNonTrackPrecision: share(c.minNonTrackPrecision, 'minNonTrackPrecision'),
    minAccuracy: {
      exploitation: share(acc.exploitation, 'minAccuracy.exploitation'),
      automatable: share(acc.automatable, 'minAccuracy.automatable'),
      technicalImpact: share(acc.technicalImpact, 'minAccuracy.technicalImpact'),
    },
    minRows: c.minRows,
  };
}

/**
 * The version of a set of thresholds: `sha256:` + SHA-256 of their canonical JSON, so two runs
 * can be told to have applied the same gate however its file was indented.
 */
export function gateConfigVersion(t: GateThresholds): string {
  return `sha256:${sha256Hex(canonicalJson(t))}`;
}

/** Every condition the metrics fail, as readable lines. */
export function gateFailures(m: EvaluationMetrics, t: GateThresholds): string[] {
  const failures: string[] = [];
  const pct = (x: number): string => `${(x * 100).toFixed(2)}%`;
  const points = (x: number): string => `${(x * 100).toFixed(2)} points`;
  if (m.rows < t.minRows) failures.push(`rows ${m.rows} < minRows ${t.minRows}`);
  const margin = m.agreement - m.majorityBaselineAgreement;
  // Compared in millionths, so floating-point error cannot fail a margin of exactly 2 points.
  if (Math.round(margin * 1e6) < Math.round(t.minAgreementOverBaseline * 1e6)) {
    failures.push(
      `agreement ${pct(m.agreement)} is ${points(margin)} over the majority baseline ` +
        `${pct(m.majorityBaselineAgreement)} < minAgreementOverBaseline ${points(t.minAgreementOverBaseline)}`,
    );
  }
  // A file without any elevated row cannot show the model avoids answering Track for all.
  if (m.elevatedRecall === null) {
    if (t.minElevatedRecall > 0) failures.push('no row with a labelled outcome above Track');
  } else if (m.elevatedRecall < t.minElevatedRecall) {
    failures.push(`elevated recall ${pct(m.elevatedRecall)} < minElevatedRecall ${pct(t.minElevatedRecall)}`);
  }
  if (m.nonTrackPrecision === null) {
    if (t.minNonTrackPrecision > 0) failures.push('no answer above Track to measure precision on');
  } else if (m.nonTrackPrecision < t.minNonTrackPrecision) {
    failures.push(
      `non-Track precision ${pct(m.nonTrackPrecision)} < minNonTrackPrecision ${pct(t.minNonTrackPrecision)}`,
    );
  }
  for (const point of ['exploitation', 'automatable', 'technicalImpact'] as const) {
    if (m.accuracy[point] < t.minAccuracy[point]) {
      failures.push(`${point} accuracy ${pct(m.accuracy[point])} < ${pct(t.minAccuracy[point])}`);
    }
  }
  if (m.kevFloorViolations > 0) {
    failures.push(
      `${m.kevFloorViolations} KEV row(s) answered below HIGH (${m.kevFloorViolationCves.join(', ')})`,
    );
  }
  return failures;
}

/**
 * The rows of the file under test the gate scores. On the file the model was trained on (same
 * SHA-256 as recorded in the model), only the rows of its validation slice: scoring rows it was
 * fitted on would flatter it. Any other file is scored whole.
 */
export function scoredRows(
  model: InhouseModel,
  rows: readonly LabelledRow[],
  datasetSha256: string,
): { rows: readonly LabelledRow[]; scope: string } {
  const training = modelTraining(model);
  if (training.datasetSha256 !== datasetSha256) return { rows, scope: 'all rows' };
  const { validation } = splitByCve(rows, training.options.validationPercent);
  return {
    rows: validation,
    scope: `the model's training file: only its held-out random split (${training.validationSplit})`,
  };
}

/** Evaluates the model and returns the record to store. `now` is injected for tests. */
export function runGate(
  model: InhouseModel,
  rows: readonly LabelledRow[],
  thresholds: GateThresholds,
  dataset: { sha256: string; name: string },
  now: Date = new Date(),
): GateRecord {
  const scored = scoredRows(model, rows, dataset.sha256);
  const metrics: GateMetrics = {
    ...evaluateModel(model, scored.rows),
    datasetRows: rows.length,
    scope: scored.scope,
  };
  const failures = gateFailures(metrics, thresholds);
  return {
    modelVersion: model.version,
    datasetSha256: dataset.sha256,
    datasetName: dataset.name,
    thresholds,
    metrics,
    passed: failures.length === 0,
    failures,
    evaluatedAt: now.toISOString(),
  };
}
