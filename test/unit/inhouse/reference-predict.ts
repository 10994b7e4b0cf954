/**
 * The in-house model's prediction as it was written before the compiled predictor
 * (`src/domain/inhouse/predictor.ts`): named features, a `Map` lookup per feature, trees as
 * arrays of objects. Kept only to prove the compiled path gives the same numbers bit for bit.
 */
import { ssvcDecide } from '../../../src/domain/triage-engine/ssvc.js';
import type {
  Automatable,
  Exploitation,
  MissionWellbeing,
  SsvcDecision,
  TechnicalImpact,
} from '../../../src/domain/triage-engine/ssvc.js';
import { extractFeatures } from '../../../src/domain/inhouse/features.js';
import type { FeatureInput } from '../../../src/domain/inhouse/features.js';
import type { Booster, Tree } from '../../../src/domain/inhouse/gbt.js';
import { HEAD_CLASSES } from '../../../src/domain/inhouse/model.js';
import type { HeadName, InhouseModel, InhouseStack } from '../../../src/domain/inhouse/model.js';
import { stackFeatures } from '../../../src/domain/inhouse/stack-features.js';

export interface ReferencePoints {
  exploitationFromKev: boolean;
  exploitation: Exploitation;
  automatable: Automatable;
  technicalImpact: TechnicalImpact;
  probabilities: {
    exploitation: Record<Exploitation, number>;
    automatable: Record<Automatable, number>;
    technicalImpact: Record<TechnicalImpact, number>;
  };
}

function treeValue(tree: Tree, x: readonly number[]): number {
  let n = 0;
  while ((tree.f[n] as number) >= 0) {
    n =
      (x[tree.f[n] as number] as number) <= (tree.t[n] as number)
        ? (tree.l[n] as number)
        : (tree.r[n] as number);
  }
  return tree.v[n] as number;
}

function boosterScores(b: Booster, x: readonly number[]): number[] {
  const z = b.base.slice();
  for (const round of b.trees) {
    const first = z.length - round.length;
    for (let c = 0; c < round.length; c++)
      z[first + c] = (z[first + c] as number) + treeValue(round[c] as Tree, x);
  }
  return z;
}

function softmax(z: number[]): number[] {
  const max = Math.max(...z);
  const e = z.map((v) => Math.exp(v - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}

function headProbabilities(model: InhouseModel, head: HeadName, idx: number[], val: number[]): number[] {
  const h = model.body.heads[head];
  const z = h.bias.map((b, c) => {
    const w = h.weights[c] as number[];
    let s = b;
    for (let j = 0; j < idx.length; j++) s += (w[idx[j] as number] as number) * (val[j] as number);
    return s;
  });
  return softmax(z);
}

function argmax<T extends string>(classes: readonly T[], p: number[]): T {
  let best = 0;
  for (let i = 1; i < p.length; i++) if ((p[i] as number) > (p[best] as number)) best = i;
  return classes[best] as T;
}

function toRecord<T extends string>(classes: readonly T[], p: number[]): Record<T, number> {
  return Object.fromEntries(classes.map((c, i) => [c, p[i] as number])) as Record<T, number>;
}

export function referenceTextHeadProbabilities(
  model: InhouseModel,
  input: FeatureInput,
): Record<HeadName, number[]> {
  const f = extractFeatures(input);
  const idx: number[] = [];
  const val: number[] = [];
  f.names.forEach((name, j) => {
    const i = model.featureIndex.get(name);
    if (i !== undefined) {
      idx.push(i);
      val.push(f.values[j] as number);
    }
  });
  return {
    exploitation: headProbabilities(model, 'exploitation', idx, val),
    automatable: headProbabilities(model, 'automatable', idx, val),
    technicalImpact: headProbabilities(model, 'technicalImpact', idx, val),
  };
}

function stackedProbabilities(
  stack: InhouseStack,
  input: FeatureInput,
  heads: Record<HeadName, number[]>,
): Record<HeadName, number[]> {
  const x = stackFeatures(input, {
    poc: heads.exploitation[1] as number,
    active: heads.exploitation[2] as number,
    automatable: heads.automatable[1] as number,
    total: heads.technicalImpact[1] as number,
  });
  return {
    exploitation: softmax(boosterScores(stack.boosters.exploitation, x)),
    automatable: softmax(boosterScores(stack.boosters.automatable, x)),
    technicalImpact: softmax(boosterScores(stack.boosters.technicalImpact, x)),
  };
}

export function referencePredictDecisionPoints(model: InhouseModel, input: FeatureInput): ReferencePoints {
  const heads = referenceTextHeadProbabilities(model, input);
  const stack = model.body.stack;
  const p = stack ? stackedProbabilities(stack, input, heads) : heads;
  const exploitationFromKev = model.body.rules.kevImpliesActive && input.kev;
  const pe = exploitationFromKev ? [0, 0, 1] : p.exploitation;
  return {
    exploitationFromKev,
    exploitation: argmax(HEAD_CLASSES.exploitation, pe),
    automatable: argmax(HEAD_CLASSES.automatable, p.automatable),
    technicalImpact: argmax(HEAD_CLASSES.technicalImpact, p.technicalImpact),
    probabilities: {
      exploitation: toRecord(HEAD_CLASSES.exploitation, pe),
      automatable: toRecord(HEAD_CLASSES.automatable, p.automatable),
      technicalImpact: toRecord(HEAD_CLASSES.technicalImpact, p.technicalImpact),
    },
  };
}

interface Combination {
  exploitation: Exploitation;
  automatable: Automatable;
  technicalImpact: TechnicalImpact;
  outcome: SsvcDecision;
}

function combinations(mission: MissionWellbeing): Combination[] {
  const out: Combination[] = [];
  for (const exploitation of HEAD_CLASSES.exploitation) {
    for (const automatable of HEAD_CLASSES.automatable) {
      for (const technicalImpact of HEAD_CLASSES.technicalImpact) {
        const outcome = ssvcDecide({ exploitation, automatable, technicalImpact, missionWellbeing: mission });
        out.push({ exploitation, automatable, technicalImpact, outcome });
      }
    }
  }
  return out;
}

const OUTCOMES: readonly SsvcDecision[] = ['Track', 'Track*', 'Attend', 'Act'];

/** The weighted outcome choice of the stacked model, then that outcome's probability. */
export function referenceChoice(
  points: ReferencePoints,
  mission: MissionWellbeing,
  elevatedWeight: number,
): { points: ReferencePoints; outcome: SsvcDecision; probability: number } {
  const p = points.probabilities;
  const combos = combinations(mission);
  const joint = combos.map(
    (c) =>
      p.exploitation[c.exploitation] * p.automatable[c.automatable] * p.technicalImpact[c.technicalImpact],
  );
  const byOutcome = new Map<SsvcDecision, number>();
  combos.forEach((c, i) => byOutcome.set(c.outcome, (byOutcome.get(c.outcome) ?? 0) + (joint[i] as number)));
  let outcome: SsvcDecision = 'Track';
  let best = -1;
  for (const o of OUTCOMES) {
    const w = (byOutcome.get(o) ?? 0) * (o === 'Track' ? 1 : elevatedWeight);
    if (w > best) {
      best = w;
      outcome = o;
    }
  }
  let choice: Pick<ReferencePoints, 'exploitation' | 'automatable' | 'technicalImpact'> = points;
  let bestJoint = -1;
  combos.forEach((c, i) => {
    if (c.outcome === outcome && (joint[i] as number) > bestJoint) {
      bestJoint = joint[i] as number;
      choice = c;
    }
  });
  let probability = 0;
  for (const c of combos) {
    if (c.outcome === outcome) {
      probability +=
        p.exploitation[c.exploitation] * p.automatable[c.automatable] * p.technicalImpact[c.technicalImpact];
    }
  }
  return {
    points: {
      ...points,
      exploitation: choice.exploitation,
      automatable: choice.automatable,
      technicalImpact: choice.technicalImpact,
    },
    outcome,
    probability,
  };
}
