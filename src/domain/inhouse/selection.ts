import { ssvcDecide } from '../triage-engine/ssvc.js';
import type { SsvcDecision } from '../triage-engine/ssvc.js';
import type { LabelledRow } from './dataset.js';
import { EVALUATION_MISSION, outcomeRates, SSVC_OUTCOMES } from './evaluate.js';
import type { Confusion } from './evaluate.js';
import { boosterScores, trainBooster } from './gbt.js';
import type { Booster, GbtOptions } from './gbt.js';
import { HEAD_CLASSES, HEAD_NAMES, stackedOutcome } from './model.js';
import type { HeadName } from './model.js';
import { softmax } from './predictor.js';

/**
 * Model selection on the training rows only (src/domain/inhouse/README.md#model-selection): the
 * number of boosting rounds and the elevated weight are chosen by cross-validating the stacked
 * stage over the training rows' out-of-fold head probabilities, never on the validation split
 * the gate scores, so the gate's figures are not the figures the choice was made on.
 */

/**
 * Boosting rounds tried (prefixes of one fit: the first r rounds of a fit are the fit of r rounds).
 * At most 60: five trees a round are walked per prediction, and 60 rounds keep a prediction within
 * its time budget (src/domain/inhouse/README.md#prediction-time); in the vocabulary study 80 rounds
 * cleared the lines by the same margin as 60 (src/domain/inhouse/README.md#vocabulary).
 */
export const SELECTION_ROUNDS: readonly number[] = [40, 60];
/** Elevated weights tried: finer where the recall and precision lines cross. */
export const SELECTION_WEIGHTS: readonly number[] = [
  1, 1.25, 1.4, 1.5, 1.55, 1.6, 1.65, 1.7, 1.75, 1.8, 2, 2.5, 3,
];

export interface SelectionTargets {
  agreementGain: number;
  elevatedRecall: number;
  nonTrackPrecision: number;
}

export interface SelectionCandidate {
  gbtRounds: number;
  elevatedWeight: number;
  agreement: number;
  majorityBaseline: number;
  elevatedRecall: number | null;
  nonTrackPrecision: number | null;
  /** The smallest margin over the three targets; null when a rate has nothing to count. */
  margin: number | null;
}

/** What the model file records about the choice (in `body.training.selection`). */
export interface Selection {
  split: string;
  rows: number;
  criterion: string;
  targets: SelectionTargets;
  candidates: SelectionCandidate[];
  chosen: { gbtRounds: number; elevatedWeight: number };
}

const CRITERION =
  'largest smallest margin over the targets (agreement - baseline - agreementGain, elevated recall - elevatedRecall, ' +
  'non-Track precision - nonTrackPrecision); ties: fewer rounds, then the smaller weight';

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/** The candidate's margin: how far it clears the lowest of the three lines (negative: misses one). */
export function selectionMargin(
  m: {
    agreement: number;
    majorityBaseline: number;
    elevatedRecall: number | null;
    nonTrackPrecision: number | null;
  },
  t: SelectionTargets,
): number | null {
  if (m.elevatedRecall === null || m.nonTrackPrecision === null) return null;
  return Math.min(
    m.agreement - m.majorityBaseline - t.agreementGain,
    m.elevatedRecall - t.elevatedRecall,
    m.nonTrackPrecision - t.nonTrackPrecision,
  );
}

export interface SelectionInput {
  rows: readonly LabelledRow[];
  /** The stacked stage's dense input of each row (the heads' out-of-fold probabilities and facts). */
  x: readonly (readonly number[])[];
  /** Each row's class index per decision point. */
  labels: Record<HeadName, readonly number[]>;
  /** Each row's fold, in `[0, folds)`. */
  fold: readonly number[];
  folds: number;
  foldRule: string;
  gbt: GbtOptions;
  targets: SelectionTargets;
}

/**
 * For each fold, boosters with the most rounds of the grid are fitted on the other folds and give
 * the fold's rows their stacked probabilities after every rounds value of the grid; every (rounds,
 * weight) candidate is then scored on all rows at once, each row answered by boosters that never
 * saw it, and chosen by {@link CRITERION}.
 */
export function selectByCrossValidation(input: SelectionInput): Selection {
  const { rows, x, fold } = input;
  const rounds = [...SELECTION_ROUNDS].sort((a, b) => a - b);
  const weights = [...SELECTION_WEIGHTS].sort((a, b) => a - b);
  const maxRounds = rounds[rounds.length - 1] as number;
  // probs[r][i]: row i's stacked probabilities after rounds[r] rounds.
  const probs: Record<HeadName, number[]>[][] = rounds.map(() => new Array(rows.length));
  for (let k = 0; k < input.folds; k++) {
    const fit: number[] = [];
    for (let i = 0; i < rows.length; i++) if (fold[i] !== k) fit.push(i);
    if (fit.length === rows.length) continue;
    const boosters = {} as Record<HeadName, Booster>;
    for (const head of HEAD_NAMES) {
      boosters[head] = trainBooster(
        fit.map((i) => x[i] as readonly number[]),
        fit.map((i) => input.labels[head][i] as number),
        HEAD_CLASSES[head].length,
        { ...input.gbt, rounds: maxRounds },
      );
    }
    rounds.forEach((r, ri) => {
      const cut = Object.fromEntries(
        HEAD_NAMES.map((h) => [h, { base: boosters[h].base, trees: boosters[h].trees.slice(0, r) }]),
      ) as Record<HeadName, Booster>;
      for (let i = 0; i < rows.length; i++) {
        if (fold[i] !== k) continue;
        const xi = x[i] as readonly number[];
        (probs[ri] as Record<HeadName, number[]>[])[i] = {
          exploitation: softmax(boosterScores(cut.exploitation, xi)),
          automatable: softmax(boosterScores(cut.automatable, xi)),
          technicalImpact: softmax(boosterScores(cut.technicalImpact, xi)),
        };
      }
    });
  }
  const labelled = rows.map((row) =>
    ssvcDecide({
      exploitation: row.exploitation,
      automatable: row.automatable,
      technicalImpact: row.technicalImpact,
      missionWellbeing: EVALUATION_MISSION,
    }),
  );
  const candidates: SelectionCandidate[] = [];
  let best: SelectionCandidate | null = null;
  for (let ri = 0; ri < rounds.length; ri++) {
    const r = rounds[ri] as number;
    for (const w of weights) {
      const confusion = Object.fromEntries(
        SSVC_OUTCOMES.map((o) => [o, Object.fromEntries(SSVC_OUTCOMES.map((p) => [p, 0]))]),
      ) as Confusion<SsvcDecision>;
      let agree = 0;
      rows.forEach((row, i) => {
        const p = (probs[ri] as Record<HeadName, number[]>[])[i];
        if (!p) return;
        const answer = stackedOutcome(p, row.kev, EVALUATION_MISSION, w);
        const truth = labelled[i] as SsvcDecision;
        confusion[truth][answer]++;
        if (answer === truth) agree++;
      });
      const n = rows.length;
      const majority = Math.max(
        ...SSVC_OUTCOMES.map((o) => SSVC_OUTCOMES.reduce((s, p) => s + confusion[o][p], 0)),
      );
      const rates = outcomeRates(confusion);
      const figures = {
        agreement: n === 0 ? 0 : agree / n,
        majorityBaseline: n === 0 ? 0 : majority / n,
        elevatedRecall: rates.elevatedRecall,
        nonTrackPrecision: rates.nonTrackPrecision,
      };
      const margin = selectionMargin(figures, input.targets);
      const candidate: SelectionCandidate = {
        gbtRounds: r,
        elevatedWeight: w,
        agreement: round6(figures.agreement),
        majorityBaseline: round6(figures.majorityBaseline),
        elevatedRecall: figures.elevatedRecall === null ? null : round6(figures.elevatedRecall),
        nonTrackPrecision: figures.nonTrackPrecision === null ? null : round6(figures.nonTrackPrecision),
        margin: margin === null ? null : round6(margin),
      };
      candidates.push(candidate);
      const c = candidate.margin;
      if (best === null || (c !== null && (best.margin === null || c > best.margin))) best = candidate;
    }
  }
  if (best === null) throw new Error('no selection candidates');
  const chosen = best;
  return {
    split: `${input.folds}-fold cross-validation of the stacked stage over the trained-on rows (${input.foldRule})`,
    rows: rows.length,
    criterion: CRITERION,
    targets: input.targets,
    candidates,
    chosen: { gbtRounds: chosen.gbtRounds, elevatedWeight: chosen.elevatedWeight },
  };
}
