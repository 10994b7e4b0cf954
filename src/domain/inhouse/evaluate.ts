import { ssvcDecide } from '../triage-engine/ssvc.js';
import type { MissionWellbeing, SsvcDecision } from '../triage-engine/ssvc.js';
import type { LabelledRow } from './dataset.js';
import { rowFeatureInput } from './features.js';
import { HEAD_CLASSES, HEAD_NAMES, inhouseTriage } from './model.js';
import type { HeadName, InhouseModel } from './model.js';
import { priorityBelow } from './outcome.js';

/**
 * Mission & well-being used on both sides of the comparison: the labelled data has no
 * asset, and `medium` is also what a request without asset criticality gets.
 */
export const EVALUATION_MISSION: MissionWellbeing = 'medium';

export const SSVC_OUTCOMES: readonly SsvcDecision[] = ['Track', 'Track*', 'Attend', 'Act'];

/** The outcomes above Track: the ones a triage must not miss. */
export const ELEVATED_OUTCOMES: readonly SsvcDecision[] = ['Track*', 'Attend', 'Act'];

/** `confusion[labelled][predicted]` = row count. */
export type Confusion<T extends string> = Record<T, Record<T, number>>;

type HeadValue<H extends HeadName> = (typeof HEAD_CLASSES)[H][number];

export interface EvaluationMetrics {
  rows: number;
  /** Share of rows whose predicted SSVC outcome equals the labelled one. */
  agreement: number;
  /** Agreement a model answering the most common labelled outcome for every row would get. */
  majorityBaselineAgreement: number;
  /**
   * Among rows labelled above Track (Track*, Attend, Act), the share predicted with exactly their
   * outcome; null when the file has none.
   */
  elevatedRecall: number | null;
  /**
   * Among rows predicted above Track, the share whose labelled outcome is exactly the predicted
   * one; null when the model gave no such answer.
   */
  nonTrackPrecision: number | null;
  accuracy: { exploitation: number; automatable: number; technicalImpact: number };
  outcomeConfusion: Confusion<SsvcDecision>;
  /** Per decision point, labelled → predicted, in the SSVC module's values (`public_poc` is the dataset's `poc`). */
  pointConfusion: { [H in HeadName]: Confusion<HeadValue<H>> };
  kevRows: number;
  /** KEV-tagged rows answered below HIGH priority. Must be zero for the gate to pass. */
  kevFloorViolations: number;
  /** The first few violating CVEs, for the operator. */
  kevFloorViolationCves: string[];
}

function emptyConfusion<T extends string>(classes: readonly T[]): Confusion<T> {
  const row = (): Record<T, number> => Object.fromEntries(classes.map((c) => [c, 0])) as Record<T, number>;
  return Object.fromEntries(classes.map((c) => [c, row()])) as Confusion<T>;
}

/**
 * Elevated recall and non-Track precision of an outcome confusion. Both count a row as right
 * only when the outcome is exactly right: answering Act for a Track* row is not a hit.
 */
export function outcomeRates(confusion: Confusion<SsvcDecision>): {
  elevatedRecall: number | null;
  nonTrackPrecision: number | null;
} {
  let hits = 0;
  let labelled = 0;
  let predicted = 0;
  for (const o of ELEVATED_OUTCOMES) {
    hits += confusion[o][o];
    for (const p of SSVC_OUTCOMES) {
      labelled += confusion[o][p];
      predicted += confusion[p][o];
    }
  }
  return {
    elevatedRecall: labelled === 0 ? null : hits / labelled,
    nonTrackPrecision: predicted === 0 ? null : hits / predicted,
  };
}

/** Runs the model on every labelled row exactly as a triage request would be answered. */
export function evaluateModel(model: InhouseModel, rows: readonly LabelledRow[]): EvaluationMetrics {
  const confusion = emptyConfusion(SSVC_OUTCOMES);
  const points = {
    exploitation: emptyConfusion(HEAD_CLASSES.exploitation),
    automatable: emptyConfusion(HEAD_CLASSES.automatable),
    technicalImpact: emptyConfusion(HEAD_CLASSES.technicalImpact),
  };
  const tally = points as Record<HeadName, Confusion<string>>;
  let agree = 0;
  let kevRows = 0;
  const violations: string[] = [];
  for (const row of rows) {
    const answer = inhouseTriage(model, { ...rowFeatureInput(row), mission: EVALUATION_MISSION });
    const labelled = ssvcDecide({
      exploitation: row.exploitation,
      automatable: row.automatable,
      technicalImpact: row.technicalImpact,
      missionWellbeing: EVALUATION_MISSION,
    });
    confusion[labelled][answer.ssvcOutcome]++;
    if (labelled === answer.ssvcOutcome) agree++;
    for (const head of HEAD_NAMES) {
      const cells = tally[head][row[head]] as Record<string, number>;
      const predicted = answer.decisionPoints[head];
      cells[predicted] = (cells[predicted] ?? 0) + 1;
    }
    if (row.kev) {
      kevRows++;
      if (priorityBelow(answer.priority, 'HIGH')) violations.push(row.cve);
    }
  }
  const n = rows.length;
  const labelledCounts = SSVC_OUTCOMES.map((o) => SSVC_OUTCOMES.reduce((s, p) => s + confusion[o][p], 0));
  const diagonal = (h: HeadName): number =>
    Object.keys(tally[h]).reduce((s, c) => s + (tally[h][c]?.[c] ?? 0), 0);
  return {
    rows: n,
    agreement: ratio(agree, n),
    majorityBaselineAgreement: ratio(Math.max(...labelledCounts), n),
    ...outcomeRates(confusion),
    accuracy: {
      exploitation: ratio(diagonal('exploitation'), n),
      automatable: ratio(diagonal('automatable'), n),
      technicalImpact: ratio(diagonal('technicalImpact'), n),
    },
    outcomeConfusion: confusion,
    pointConfusion: points,
    kevRows,
    kevFloorViolations: violations.length,
    kevFloorViolationCves: violations.slice(0, 20),
  };
}

/** Not rounded: the gate compares these with its thresholds. */
function ratio(x: number, n: number): number {
  return n === 0 ? 0 : x / n;
}
