import { ssvcDecide } from '../triage-engine/ssvc.js';
import type { MissionWellbeing, SsvcDecision } from '../triage-engine/ssvc.js';
import type { LabelledRow } from './dataset.js';
import { inhouseTriage } from './model.js';
import type { InhouseModel } from './model.js';
import { priorityBelow } from './outcome.js';

/**
 * Mission & well-being used on both sides of the comparison: the labelled data has no
 * asset, and `medium` is also what a request without asset criticality gets.
 */
export const EVALUATION_MISSION: MissionWellbeing = 'medium';

export const SSVC_OUTCOMES: readonly SsvcDecision[] = ['Track', 'Track*', 'Attend', 'Act'];

export interface EvaluationMetrics {
  rows: number;
  /** Share of rows whose predicted SSVC outcome equals the labelled one. */
  agreement: number;
  /** Agreement a model answering the most common labelled outcome for every row would get. */
  majorityBaselineAgreement: number;
  /** Among rows whose labelled outcome is above Track, the share predicted exactly. */
  elevatedAgreement: number | null;
  accuracy: { exploitation: number; automatable: number; technicalImpact: number };
  /** `outcomeConfusion[labelled][predicted]` = row count. */
  outcomeConfusion: Record<SsvcDecision, Record<SsvcDecision, number>>;
  kevRows: number;
  /** KEV-tagged rows answered below HIGH priority. Must be zero for the gate to pass. */
  kevFloorViolations: number;
  /** The first few violating CVEs, for the operator. */
  kevFloorViolationCves: string[];
}

function emptyConfusion(): Record<SsvcDecision, Record<SsvcDecision, number>> {
  const row = (): Record<SsvcDecision, number> => ({ Track: 0, 'Track*': 0, Attend: 0, Act: 0 });
  return { Track: row(), 'Track*': row(), Attend: row(), Act: row() };
}

/** Runs the model on every labelled row exactly as a triage request would be answered. */
export function evaluateModel(model: InhouseModel, rows: readonly LabelledRow[]): EvaluationMetrics {
  const confusion = emptyConfusion();
  let agree = 0;
  let e = 0;
  let a = 0;
  let t = 0;
  let kevRows = 0;
  const violations: string[] = [];
  for (const row of rows) {
    const answer = inhouseTriage(model, {
      kev: row.kev,
      cvssScore: row.cvssScore,
      cvssVector: row.cvssVector,
      text: row.description,
      mission: EVALUATION_MISSION,
    });
    const labelled = ssvcDecide({
      exploitation: row.exploitation,
      automatable: row.automatable,
      technicalImpact: row.technicalImpact,
      missionWellbeing: EVALUATION_MISSION,
    });
    confusion[labelled][answer.ssvcOutcome]++;
    if (labelled === answer.ssvcOutcome) agree++;
    const p = answer.decisionPoints;
    if (p.exploitation === row.exploitation) e++;
    if (p.automatable === row.automatable) a++;
    if (p.technicalImpact === row.technicalImpact) t++;
    if (row.kev) {
      kevRows++;
      if (priorityBelow(answer.priority, 'HIGH')) violations.push(row.cve);
    }
  }
  const n = rows.length;
  const labelledCounts = SSVC_OUTCOMES.map((o) => SSVC_OUTCOMES.reduce((s, p) => s + confusion[o][p], 0));
  const elevated = SSVC_OUTCOMES.filter((o) => o !== 'Track');
  const elevatedRows = elevated.reduce(
    (s, o) => s + SSVC_OUTCOMES.reduce((x, p) => x + confusion[o][p], 0),
    0,
  );
  const elevatedHits = elevated.reduce((s, o) => s + confusion[o][o], 0);
  return {
    rows: n,
    agreement: ratio(agree, n),
    majorityBaselineAgreement: ratio(Math.max(...labelledCounts), n),
    elevatedAgreement: elevatedRows === 0 ? null : ratio(elevatedHits, elevatedRows),
    accuracy: { exploitation: ratio(e, n), automatable: ratio(a, n), technicalImpact: ratio(t, n) },
    outcomeConfusion: confusion,
    kevRows,
    kevFloorViolations: violations.length,
    kevFloorViolationCves: violations.slice(0, 20),
  };
}

/** Not rounded: the gate compares these with its thresholds. */
function ratio(x: number, n: number): number {
  return n === 0 ? 0 : x / n;
}
