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
import { extractFeatures, FEATURE_SCHEMA } from './features.js';
import type { FeatureInput } from './features.js';
import { KEV_FLOOR, outcomeAnswer, priorityBelow } from './outcome.js';

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
  /** Deterministic facts about how the body was made (no timestamps: they would change the version). */
  training: Record<string, unknown>;
}

/** The content of `config/inhouse-model.json`. */
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
  const version = modelVersionOf(body);
  if (file?.version !== version) {
    throw new InhouseModelError(
      `model version ${String(file?.version)} does not match its content (${version}); retrain or rewrite the file`,
    );
  }
  return Object.freeze({ version, body, featureIndex: new Map(body.features.map((f, i) => [f, i])) });
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

/**
 * Per-decision-point class probabilities and the most probable class of each. With the KEV
 * rule in force the exploitation distribution is all on `active`.
 */
export function predictDecisionPoints(model: InhouseModel, input: FeatureInput): DecisionPointPrediction {
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
  const exploitationFromKev = model.body.rules.kevImpliesActive && input.kev;
  const pe = exploitationFromKev ? [0, 0, 1] : headProbabilities(model, 'exploitation', idx, val);
  const pa = headProbabilities(model, 'automatable', idx, val);
  const pt = headProbabilities(model, 'technicalImpact', idx, val);
  return {
    exploitationFromKev,
    exploitation: argmax(HEAD_CLASSES.exploitation, pe),
    automatable: argmax(HEAD_CLASSES.automatable, pa),
    technicalImpact: argmax(HEAD_CLASSES.technicalImpact, pt),
    probabilities: {
      exploitation: toRecord(HEAD_CLASSES.exploitation, pe),
      automatable: toRecord(HEAD_CLASSES.automatable, pa),
      technicalImpact: toRecord(HEAD_CLASSES.technicalImpact, pt),
    },
  };
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
  for (const exploitation of HEAD_CLASSES.exploitation) {
    for (const automatable of HEAD_CLASSES.automatable) {
      for (const technicalImpact of HEAD_CLASSES.technicalImpact) {
        if (
          ssvcDecide({ exploitation, automatable, technicalImpact, missionWellbeing: mission }) === outcome
        ) {
          total +=
            p.exploitation[exploitation] * p.automatable[automatable] * p.technicalImpact[technicalImpact];
        }
      }
    }
  }
  return total;
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

/** Triage one finding: predicted decision points → SSVC outcome → priority and action. */
export function inhouseTriage(model: InhouseModel, input: InhouseTriageInput): InhouseAnswer {
  const predicted = predictDecisionPoints(model, input);
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
