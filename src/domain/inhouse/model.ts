import { ssvcDecide } from '../triage-engine/ssvc.js';
import type {
  Automatable,
  Exploitation,
  MissionWellbeing,
  SsvcDecision,
  TechnicalImpact,
} from '../triage-engine/ssvc.js';
import type { Priority, RecommendedAction } from '../triage-engine/types.js';
import { canonicalJson, sha256Hex } from './canonical-json.js';
import { FEATURE_SCHEMA } from './features.js';
import type { FeatureInput } from './features.js';
import type { Booster, Tree } from './gbt.js';
import { KEV_FLOOR, outcomeAnswer, priorityBelow } from './outcome.js';
import { compiledHeadProbabilities, compiledProbabilities } from './predictor.js';
import { STACK_FEATURE_SCHEMA, STACK_FEATURES, stackFeatures } from './stack-features.js';

/**
 * The in-house triage model (docs/triage.md#in-house-model): one logistic-regression head per
 * SSVC decision point, the SSVC 2.0.3 tree on the predicted points, and a KEV floor.
 *
 * Glossary:
 * - **body**: everything that decides an answer (feature names, weights, rules). Hashed.
 * - **version**: `sha256:<hex>` of the canonical JSON of the body. The gate and the
 *   shadow/serving switch key on it, so any change to a weight is a new version.
 */
export const MODEL_SCHEMA = 'inhouse-model/1';

export const HEAD_CLASSES = {
  exploitation: ['none', 'public_poc', 'active'],
  automatable: ['no', 'yes'],
  technicalImpact: ['partial', 'total'],
} as const satisfies Record<string, readonly string[]>;
export type HeadName = keyof typeof HEAD_CLASSES;
export const HEAD_NAMES = Object.keys(HEAD_CLASSES) as HeadName[];

export interface HeadWeights {
  /** One bias per class, in `HEAD_CLASSES` order. */
  bias: number[];
  /** `weights[class][feature]`, features in `body.features` order. */
  weights: number[][];
}

export interface InhouseModelBody {
  schema: typeof MODEL_SCHEMA;
  featureSchema: string;
  features: string[];
  heads: Record<HeadName, HeadWeights>;
  /**
   * `kevImpliesActive`: a KEV listing is SSVC's evidence of active exploitation, so the
   * exploitation head is overridden to `active` for KEV findings (as `deriveExploitation` does).
   * `kevPriorityFloor`: a KEV finding is never answered below HIGH (docs/triage.md#safety-policy).
   */
  rules: { kevImpliesActive: boolean; kevPriorityFloor: boolean };
  /**
   * The stacked stage: per decision point, gradient-boosted trees over the heads' probabilities
   * and the dense features of `stack-features.ts`; its probabilities replace the heads'. Absent in
   * a model of the heads alone.
   */
  stack?: InhouseStack;
  /** Deterministic facts about how the body was made (no timestamps: they would change the version). */
  training: Record<string, unknown>;
}

export interface InhouseStack {
  featureSchema: string;
  features: string[];
  boosters: Record<HeadName, Booster>;
  /**
   * How the answer is chosen from the stacked probabilities: the SSVC outcome with the largest
   * probability, those above Track counted this many times (a missed elevated outcome costs that
   * many false alarms), then that outcome's most probable decision points.
   */
  elevatedWeight: number;
}

/** The content of `config/inhouse-model.json.gz`. */
export interface InhouseModelFile {
  $comment?: string;
  version: string;
  body: InhouseModelBody;
}

export interface InhouseModel {
  readonly version: string;
  readonly body: InhouseModelBody;
  readonly featureIndex: ReadonlyMap<string, number>;
}

export class InhouseModelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InhouseModelError';
  }
}

/** The version a body has: the hash of its canonical JSON. */
export function modelVersionOf(body: InhouseModelBody): string {
  return `sha256:${sha256Hex(canonicalJson(body))}`;
}

/**
 * Validates a parsed model file and recomputes its version. Pure: the caller reads the
 * file. A stored version that does not match the content is refused, so edited weights
 * can never borrow the gate record of the weights they replaced.
 */
export function loadInhouseModel(json: unknown): InhouseModel {
  const file = json as Partial<InhouseModelFile> | null;
  const body = file?.body;
  if (!body || typeof body !== 'object') throw new InhouseModelError('model file has no "body"');
  if (body.schema !== MODEL_SCHEMA) throw new InhouseModelError(`model schema is not ${MODEL_SCHEMA}`);
  if (body.featureSchema !== FEATURE_SCHEMA) {
    throw new InhouseModelError(`feature schema ${String(body.featureSchema)} is not ${FEATURE_SCHEMA}`);
  }
  if (!Array.isArray(body.features) || !body.features.every((f) => typeof f === 'string')) {
    throw new InhouseModelError('"features" must be an array of strings');
  }
  const d = body.features.length;
  for (const name of HEAD_NAMES) {
    const head = body.heads?.[name];
    const k = HEAD_CLASSES[name].length;
    const ok =
      head &&
      Array.isArray(head.bias) &&
      head.bias.length === k &&
      head.bias.every(Number.isFinite) &&
      Array.isArray(head.weights) &&
      head.weights.length === k &&
      head.weights.every((row) => Array.isArray(row) && row.length === d && row.every(Number.isFinite));
    if (!ok) throw new InhouseModelError(`head "${name}" must have ${k} biases and ${k}×${d} finite weights`);
  }
  for (const rule of ['kevImpliesActive', 'kevPriorityFloor'] as const) {
    if (typeof body.rules?.[rule] !== 'boolean')
      throw new InhouseModelError(`"rules.${rule}" must be a boolean`);
  }
  if (body.stack !== undefined) checkStack(body.stack);
  const version = modelVersionOf(body);
  if (file?.version !== version) {
    throw new InhouseModelError(
      `model version ${String(file?.version)} does not match its content (${version}); retrain or rewrite the file`,
    );
  }
  return Object.freeze({ version, body, featureIndex: new Map(body.features.map((f, i) => [f, i])) });
}

function isTree(t: Tree, features: number): boolean {
  const arrays = [t?.f, t?.t, t?.l, t?.r, t?.v];
  if (!arrays.every(Array.isArray)) return false;
  const size = t.f.length;
  if (size === 0 || !arrays.every((a) => a.length === size && a.every(Number.isFinite))) return false;
  // Children come after their node, so evaluation always ends at a leaf.
  return t.f.every(
    (f, n) =>
      f < 0 ||
      (Number.isInteger(f) &&
        f < features &&
        (t.l[n] as number) > n &&
        (t.r[n] as number) > n &&
        (t.l[n] as number) < size &&
        (t.r[n] as number) < size),
  );
}

function checkStack(stack: InhouseStack): void {
  if (stack?.featureSchema !== STACK_FEATURE_SCHEMA) {
    throw new InhouseModelError(
      `stack feature schema ${String(stack?.featureSchema)} is not ${STACK_FEATURE_SCHEMA}`,
    );
  }
  if (
    !Array.isArray(stack.features) ||
    stack.features.length !== STACK_FEATURES.length ||
    !stack.features.every((f, i) => f === STACK_FEATURES[i])
  ) {
    throw new InhouseModelError(`"stack.features" must be ${STACK_FEATURES.join(', ')}`);
  }
  if (typeof stack.elevatedWeight !== 'number' || !(stack.elevatedWeight > 0)) {
    throw new InhouseModelError('"stack.elevatedWeight" must be a positive number');
  }
  for (const name of HEAD_NAMES) {
    const b = stack.boosters?.[name];
    const k = HEAD_CLASSES[name].length;
    const ok =
      b &&
      Array.isArray(b.base) &&
      b.base.length === k &&
      b.base.every(Number.isFinite) &&
      Array.isArray(b.trees) &&
      b.trees.every(
        (round) =>
          Array.isArray(round) &&
          round.length === b.trees[0]?.length &&
          (round.length === k || (k === 2 && round.length === 1)) &&
          round.every((t) => isTree(t, STACK_FEATURES.length)),
      );
    if (!ok)
      throw new InhouseModelError(
        `stack booster "${name}" must have ${k} base scores and ${k} valid trees a round${k === 2 ? ' (or 1 in every round)' : ''}`,
      );
  }
}

export interface DecisionPointPrediction {
  /** True when `exploitation` is `active` by the KEV rule rather than by the head. */
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

function argmax<T extends string>(classes: readonly T[], p: number[]): T {
  let best = 0;
  for (let i = 1; i < p.length; i++) if ((p[i] as number) > (p[best] as number)) best = i;
  return classes[best] as T;
}

function toRecord<T extends string>(classes: readonly T[], p: number[]): Record<T, number> {
  return Object.fromEntries(classes.map((c, i) => [c, p[i] as number])) as Record<T, number>;
}

/**
 * Per-decision-point class probabilities and the most probable class of each. With the KEV
 * rule in force the exploitation distribution is all on `active`.
 */
export function predictDecisionPoints(model: InhouseModel, input: FeatureInput): DecisionPointPrediction {
  return pointsFrom(compiledProbabilities(model, input), model.body.rules.kevImpliesActive && input.kev);
}

/** Decision points from per-point probabilities (`HEAD_CLASSES` order), with the KEV ⇒ active rule when it applies. */
function pointsFrom(p: Record<HeadName, number[]>, exploitationFromKev: boolean): DecisionPointPrediction {
  const pe = exploitationFromKev ? [0, 0, 1] : p.exploitation;
  const pa = p.automatable;
  const pt = p.technicalImpact;
  return {
    exploitationFromKev,
    exploitation: argmax(HEAD_CLASSES.exploitation, pe),
    automatable: argmax(HEAD_CLASSES.automatable, pa),
    technicalImpact: argmax(HEAD_CLASSES.technicalImpact, pt),
    probabilities: {
      exploitation: { none: pe[0] as number, public_poc: pe[1] as number, active: pe[2] as number },
      automatable: { no: pa[0] as number, yes: pa[1] as number },
      technicalImpact: { partial: pt[0] as number, total: pt[1] as number },
    },
  };
}

/**
 * The SSVC outcome a stacked model answers for these stacked probabilities (the KEV ⇒ active rule
 * on, no CISA points, before the KEV floor): what `inhouseTriage` decides, for model selection.
 */
export function stackedOutcome(
  p: Record<HeadName, number[]>,
  kev: boolean,
  mission: MissionWellbeing,
  elevatedWeight: number,
): SsvcDecision {
  const points = weightedOutcomeChoice(pointsFrom(p, kev), mission, elevatedWeight);
  return ssvcDecide({
    exploitation: points.exploitation,
    automatable: points.automatable,
    technicalImpact: points.technicalImpact,
    missionWellbeing: mission,
  });
}

/** Class probabilities (in `HEAD_CLASSES` order) of each logistic-regression head, before any rule. */
export function textHeadProbabilities(model: InhouseModel, input: FeatureInput): Record<HeadName, number[]> {
  return compiledHeadProbabilities(model, input);
}

/** The dense input of the stacked stage: the heads' probabilities plus the finding's facts. */
export function stackInput(input: FeatureInput, heads: Record<HeadName, number[]>): number[] {
  return stackFeatures(input, {
    poc: heads.exploitation[1] as number,
    active: heads.exploitation[2] as number,
    automatable: heads.automatable[1] as number,
    total: heads.technicalImpact[1] as number,
  });
}

/**
 * Probability that the SSVC outcome is `outcome`, treating the heads as independent:
 * the sum over the 12 decision-point combinations the tree maps to that outcome.
 */
export function outcomeProbability(
  p: DecisionPointPrediction['probabilities'],
  mission: MissionWellbeing,
  outcome: SsvcDecision,
): number {
  let total = 0;
  for (const c of combinations(mission)) {
    if (c.outcome === outcome) {
      total +=
        p.exploitation[c.exploitation] * p.automatable[c.automatable] * p.technicalImpact[c.technicalImpact];
    }
  }
  return total;
}

interface Combination {
  exploitation: Exploitation;
  automatable: Automatable;
  technicalImpact: TechnicalImpact;
  outcome: SsvcDecision;
}

const COMBINATIONS = new Map<MissionWellbeing, readonly Combination[]>();

/** The 12 decision-point combinations and the outcome the SSVC tree gives each at a mission (computed once a mission). */
function combinations(mission: MissionWellbeing): readonly Combination[] {
  let list = COMBINATIONS.get(mission);
  if (!list) {
    const out: Combination[] = [];
    for (const exploitation of HEAD_CLASSES.exploitation) {
      for (const automatable of HEAD_CLASSES.automatable) {
        for (const technicalImpact of HEAD_CLASSES.technicalImpact) {
          const outcome = ssvcDecide({
            exploitation,
            automatable,
            technicalImpact,
            missionWellbeing: mission,
          });
          out.push({ exploitation, automatable, technicalImpact, outcome });
        }
      }
    }
    list = Object.freeze(out);
    COMBINATIONS.set(mission, list);
  }
  return list;
}

export interface InhouseTriageInput extends FeatureInput {
  mission: MissionWellbeing;
  /**
   * CISA's own decision points when CISA scored the CVE (docs/triage.md#enrichment): used as given
   * instead of the model's predictions, as the local engine does; `label` is cited in the reasoning.
   */
  given?: Pick<DecisionPointPrediction, 'exploitation' | 'automatable' | 'technicalImpact'> & {
    label: string;
  };
}

/** Certainty given to an outcome CISA's own decision points fix (a rule is never certain). */
const GIVEN_CONFIDENCE = 0.95;

/** The prediction with CISA's decision points put in place of the model's, all probability on them. */
function withGiven(points: DecisionPointPrediction, given: NonNullable<InhouseTriageInput['given']>) {
  const onOne = <T extends string>(classes: readonly T[], value: T) =>
    toRecord(
      classes,
      classes.map((c) => (c === value ? 1 : 0)),
    );
  return {
    ...points,
    exploitation: given.exploitation,
    automatable: given.automatable,
    technicalImpact: given.technicalImpact,
    probabilities: {
      exploitation: onOne(HEAD_CLASSES.exploitation, given.exploitation),
      automatable: onOne(HEAD_CLASSES.automatable, given.automatable),
      technicalImpact: onOne(HEAD_CLASSES.technicalImpact, given.technicalImpact),
    },
  };
}

export interface InhouseAnswer {
  priority: Priority;
  recommendedAction: RecommendedAction;
  /** Probability of `ssvcOutcome` under the model, in [0, 1]. */
  confidenceScore: number;
  reasoning: string;
  ssvcOutcome: SsvcDecision;
  decisionPoints: DecisionPointPrediction;
  /** True when the KEV floor raised the answer above what the SSVC outcome maps to. */
  kevFloorApplied: boolean;
  modelVersion: string;
}

/**
 * The stacked model's choice (`stack.elevatedWeight`): the outcome with the largest weighted
 * probability, then the most probable decision points the tree maps to it at this mission.
 */
function weightedOutcomeChoice(
  points: DecisionPointPrediction,
  mission: MissionWellbeing,
  elevatedWeight: number,
): DecisionPointPrediction {
  const p = points.probabilities;
  const combos = combinations(mission);
  // Plain loops over the 12 combinations (no Map, no arrays a call): this runs on every answer.
  // Each outcome's probability is summed in combination order, as `outcomeProbability` sums it.
  let track = 0;
  let trackStar = 0;
  let attend = 0;
  let act = 0;
  for (const c of combos) {
    const j =
      p.exploitation[c.exploitation] * p.automatable[c.automatable] * p.technicalImpact[c.technicalImpact];
    if (c.outcome === 'Track') track += j;
    else if (c.outcome === 'Track*') trackStar += j;
    else if (c.outcome === 'Attend') attend += j;
    else act += j;
  }
  let outcome: SsvcDecision = 'Track';
  let best = track;
  if (trackStar * elevatedWeight > best) [outcome, best] = ['Track*', trackStar * elevatedWeight];
  if (attend * elevatedWeight > best) [outcome, best] = ['Attend', attend * elevatedWeight];
  if (act * elevatedWeight > best) outcome = 'Act';
  let choice = points as Pick<DecisionPointPrediction, 'exploitation' | 'automatable' | 'technicalImpact'>;
  let bestJoint = -1;
  for (const c of combos) {
    if (c.outcome !== outcome) continue;
    const j =
      p.exploitation[c.exploitation] * p.automatable[c.automatable] * p.technicalImpact[c.technicalImpact];
    if (j > bestJoint) {
      bestJoint = j;
      choice = c;
    }
  }
  return {
    ...points,
    exploitation: choice.exploitation,
    automatable: choice.automatable,
    technicalImpact: choice.technicalImpact,
  };
}

/** Triage one finding: predicted decision points → SSVC outcome → priority and action. */
export function inhouseTriage(model: InhouseModel, input: InhouseTriageInput): InhouseAnswer {
  const raw = predictDecisionPoints(model, input);
  const stack = model.body.stack;
  const predicted = stack ? weightedOutcomeChoice(raw, input.mission, stack.elevatedWeight) : raw;
  const points = input.given ? withGiven(predicted, input.given) : predicted;
  const ssvcOutcome = ssvcDecide({
    exploitation: points.exploitation,
    automatable: points.automatable,
    technicalImpact: points.technicalImpact,
    missionWellbeing: input.mission,
  });
  let { priority, recommendedAction } = outcomeAnswer(ssvcOutcome);
  const kevFloorApplied =
    model.body.rules.kevPriorityFloor && input.kev && priorityBelow(priority, KEV_FLOOR.priority);
  if (kevFloorApplied) ({ priority, recommendedAction } = KEV_FLOOR);
  const confidenceScore = input.given
    ? GIVEN_CONFIDENCE
    : round3(outcomeProbability(points.probabilities, input.mission, ssvcOutcome));
  const pr = points.probabilities;
  const reasoning = input.given
    ? `In-house SSVC model ${model.version.slice(0, 19)}: CISA's own decision points ` +
      `${input.given.label} (exploitation ${points.exploitation}, automatable ${points.automatable}, ` +
      `technical impact ${points.technicalImpact}); mission & well-being ${input.mission} ` +
      `→ SSVC ${ssvcOutcome} → ${priority}/${recommendedAction}.` +
      (kevFloorApplied ? ' KEV floor: raised to HIGH.' : '')
    : `In-house SSVC model ${model.version.slice(0, 19)}: exploitation ${points.exploitation} ` +
      (points.exploitationFromKev
        ? '(listed in CISA KEV), '
        : `(p=${round3(pr.exploitation[points.exploitation])}), `) +
      `automatable ${points.automatable} ` +
      `(p=${round3(pr.automatable[points.automatable])}), technical impact ${points.technicalImpact} ` +
      `(p=${round3(pr.technicalImpact[points.technicalImpact])}); mission & well-being ${input.mission} ` +
      `→ SSVC ${ssvcOutcome} → ${priority}/${recommendedAction}.` +
      (kevFloorApplied ? ' KEV floor: raised to HIGH.' : '');
  return {
    priority,
    recommendedAction,
    confidenceScore,
    reasoning,
    ssvcOutcome,
    decisionPoints: points,
    kevFloorApplied,
    modelVersion: model.version,
  };
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
