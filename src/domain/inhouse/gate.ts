import { canonicalJson, sha256Hex } from './canonical-json.js';
import type { LabelledRow } from './dataset.js';
import { evaluateModel } from './evaluate.js';
import type { EvaluationMetrics } from './evaluate.js';
import type { InhouseModel } from './model.js';

/**
 * The benchmark gate of the in-house model (docs/triage.md#in-house-model): the exact model
 * version is run over a labelled file and passes only if every threshold holds AND no
 * KEV-tagged row is answered below HIGH. The KEV condition is not configurable.
 *
 * Thresholds come from `config/inhouse-gate.json`; every field is required so that a
 * typo cannot silently disable a check.
 */
export interface GateThresholds {
  /** Smallest share of rows whose SSVC outcome equals the labelled one. */
  minAgreement: number;
  /**
   * Smallest agreement among rows whose labelled outcome is above Track. Guards against a
   * model that answers Track for everything, which already agrees on ~92% of CVEs.
   */
  minElevatedAgreement: number;
  /** Smallest per-decision-point accuracy. */
  minAccuracy: { exploitation: number; automatable: number; technicalImpact: number };
  /** Fewest rows a dataset must have for a result to count. */
  minRows: number;
}

export interface GateRecord {
  modelVersion: string;
  datasetSha256: string;
  /** As given on the command line; informational only, the hash identifies the data. */
  datasetName: string;
  thresholds: GateThresholds;
  metrics: EvaluationMetrics;
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

/** Validates the parsed `config/inhouse-gate.json`. */
export function parseGateThresholds(json: unknown): GateThresholds {
  const c = (json ?? {}) as Record<string, unknown>;
  const acc = (c.minAccuracy ?? {}) as Record<string, unknown>;
  if (typeof c.minAccuracy !== 'object' || c.minAccuracy === null) {
    throw new GateConfigError('minAccuracy must be an object {exploitation, automatable, technicalImpact}');
  }
  if (typeof c.minRows !== 'number' || !Number.isInteger(c.minRows) || c.minRows < 1) {
    throw new GateConfigError(`minRows must be a positive integer, got ${JSON.stringify(c.minRows)}`);
  }
  return {
    minAgreement: share(c.minAgreement, 'minAgreement'),
    minElevatedAgreement: share(c.minElevatedAgreement, 'minElevatedAgreement'),
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
  if (m.rows < t.minRows) failures.push(`rows ${m.rows} < minRows ${t.minRows}`);
  if (m.agreement < t.minAgreement) {
    failures.push(`agreement ${pct(m.agreement)} < minAgreement ${pct(t.minAgreement)}`);
  }
  // A file without any elevated row cannot show the model avoids answering Track for all.
  if (m.elevatedAgreement === null) {
    if (t.minElevatedAgreement > 0) failures.push('no row with a labelled outcome above Track');
  } else if (m.elevatedAgreement < t.minElevatedAgreement) {
    failures.push(
      `elevated agreement ${pct(m.elevatedAgreement)} < minElevatedAgreement ${pct(t.minElevatedAgreement)}`,
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

/** Evaluates the model and returns the record to store. `now` is injected for tests. */
export function runGate(
  model: InhouseModel,
  rows: readonly LabelledRow[],
  thresholds: GateThresholds,
  dataset: { sha256: string; name: string },
  now: Date = new Date(),
): GateRecord {
  const metrics = evaluateModel(model, rows);
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
