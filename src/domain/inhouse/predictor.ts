import { parseCvssVector, STOPWORDS, TEXT_LIMIT, V3_METRICS, V4_METRICS } from './features.js';
import type { FeatureInput } from './features.js';
import type { Booster, Tree } from './gbt.js';
import { stackFeatures } from './stack-features.js';
import { lookupPair, lookupToken, pairTable, tokenTable } from './token-table.js';
import type { PairTable, TokenTable } from './token-table.js';

/** `tokenId`'s value for a stopword. */
const STOPWORD = -2;

/**
 * The in-house model compiled for prediction (src/domain/inhouse/README.md#prediction-time): the
 * same arithmetic as the named features of `features.ts` in the same order, so the probabilities
 * are bit for bit those of the model file, without building a string per n-gram or walking
 * trees stored as objects.
 *
 * - Text: one pass over the lower-cased first `TEXT_LIMIT` characters. A token the vocabulary
 *   never uses (not in any unigram or bigram) only breaks bigrams; a token is looked up by its
 *   characters in the text and a bigram by the pair of its tokens' numbers (`token-table.ts`),
 *   never as a string.
 * - Heads: the weights of all three heads stored feature-major and side by side
 *   (`w[feature * width + offset[head] + class]`, 3 + 2 + 2 classes), so the weights a feature
 *   adds are one cache line, not three reads into three arrays of the vocabulary's size; every
 *   class's sum runs over the input's features in the order `extractFeatures` lists them.
 * - Trees: every booster's nodes in flat typed arrays, children as absolute node numbers.
 *
 * Compiled once a model object (a `WeakMap`), on its first prediction.
 */

type HeadName = 'exploitation' | 'automatable' | 'technicalImpact';
const HEADS: readonly HeadName[] = ['exploitation', 'automatable', 'technicalImpact'];

/** What of a loaded model (`InhouseModel` of `model.ts`) prediction reads. */
export interface CompilableModel {
  readonly body: {
    features: string[];
    heads: Record<HeadName, { bias: number[]; weights: number[][] }>;
    stack?: { boosters: Record<HeadName, Booster> };
  };
  readonly featureIndex: ReadonlyMap<string, number>;
}

/**
 * A booster's trees made complete to one depth and stored as heaps: node `n`'s children are
 * `2n + 1` and `2n + 2`, so a walk is `depth` steps of arithmetic, without a branch on the tree's
 * shape. A leaf above that depth becomes a node whose both sides lead to copies of its value.
 */
interface FlatBooster {
  classes: number;
  /** Trees a round: `classes`, or 1 for two classes (the tree scores class 1). */
  perRound: number;
  depth: number;
  base: Float64Array;
  /** Per tree (`round * perRound + tree`): `2^depth - 1` nodes, then `2^depth` leaves. */
  feature: Int32Array;
  threshold: Float64Array;
  leaf: Float64Array;
}

/** Feature numbers of the structured features (-1: not in the model), as `structuredFeatures` names them. */
interface StructuredIndex {
  kev: number;
  cvssAbsent: number;
  cvssScore: number;
  /** critical, high, medium, low */
  band: [number, number, number, number];
  vectorAbsent: number;
  /** `v3:<metric>:<value>` and `v4:...` by metric, then value. */
  v3: Map<string, number>[];
  v4: Map<string, number>[];
  v3Cia: Map<string, number>;
  v3Reach: Map<string, number>;
  v4Cia: Map<string, number>;
  v4Reach: Map<string, number>;
}

interface CompiledModel {
  structured: StructuredIndex;
  /**
   * Token → its number, for every token of a vocabulary term; a stopword (not a token of any
   * term) → `STOPWORD`; anything else is missing (-1).
   */
  tokenId: TokenTable;
  /** Feature of the unigram of token `id`, or -1. */
  unigram: Int32Array;
  /** Feature of the bigram `a b`, by the pair of token numbers. */
  bigram: PairTable;
  classes: Int32Array;
  /** Where each head's classes start in a feature's row of `weights`. */
  offset: Int32Array;
  /** Classes of all heads together: the row length of `weights`. */
  width: number;
  weights: Float64Array;
  bias: Float64Array;
  /** Scratch: the class sums of the prediction in progress. */
  sums: Float64Array;
  boosters: FlatBooster[] | null;
  /** Scratch: feature numbers and values of the prediction in progress, and the dedup stamps. */
  idx: Int32Array;
  val: Float64Array;
  stamp: Uint32Array;
  generation: number;
}

const COMPILED = new WeakMap<CompilableModel, CompiledModel>();

function compiledOf(model: CompilableModel): CompiledModel {
  let c = COMPILED.get(model);
  if (!c) {
    c = compile(model.body, model.featureIndex);
    COMPILED.set(model, c);
  }
  return c;
}

function compile(body: CompilableModel['body'], featureIndex: ReadonlyMap<string, number>): CompiledModel {
  const d = body.features.length;
  const tokenId = new Map<string, number>();
  const idOf = (token: string): number => {
    let id = tokenId.get(token);
    if (id === undefined) {
      id = tokenId.size;
      tokenId.set(token, id);
    }
    return id;
  };
  const unigramOf: [number, number][] = [];
  const bigramOf: [number, number, number][] = [];
  body.features.forEach((name, f) => {
    if (!name.startsWith('t:')) return;
    const parts = name.slice(2).split(' ');
    if (parts.length === 1) unigramOf.push([idOf(parts[0] as string), f]);
    else if (parts.length === 2) bigramOf.push([idOf(parts[0] as string), idOf(parts[1] as string), f]);
  });
  const unigram = new Int32Array(tokenId.size).fill(-1);
  for (const [id, f] of unigramOf) unigram[id] = f;
  const stopwords = [...STOPWORDS].map((w) => [w, STOPWORD] as const);
  const classes = Int32Array.from(HEADS, (h) => body.heads[h].bias.length);
  const offset = new Int32Array(HEADS.length);
  for (let h = 1; h < HEADS.length; h++) offset[h] = (offset[h - 1] as number) + (classes[h - 1] as number);
  const width = (offset[HEADS.length - 1] as number) + (classes[HEADS.length - 1] as number);
  const weights = new Float64Array(d * width);
  const bias = new Float64Array(width);
  HEADS.forEach((h, i) => {
    const o = offset[i] as number;
    body.heads[h].bias.forEach((b, c) => (bias[o + c] = b));
    body.heads[h].weights.forEach((row, c) => row.forEach((x, f) => (weights[f * width + o + c] = x)));
  });
  const stack = body.stack;
  return {
    structured: structuredIndex(featureIndex),
    // Tokens first: a stopword that is also a token of the vocabulary is a token.
    tokenId: tokenTable([...tokenId, ...stopwords]),
    unigram,
    bigram: pairTable(bigramOf),
    classes,
    offset,
    width,
    weights,
    bias,
    sums: new Float64Array(width),
    boosters: stack ? HEADS.map((h) => flatten(stack.boosters[h])) : null,
    idx: new Int32Array(d),
    val: new Float64Array(d),
    stamp: new Uint32Array(d),
    generation: 0,
  };
}

function depthOf(t: Tree, n = 0): number {
  return (t.f[n] as number) < 0
    ? 0
    : 1 + Math.max(depthOf(t, t.l[n] as number), depthOf(t, t.r[n] as number));
}

function structuredIndex(index: ReadonlyMap<string, number>): StructuredIndex {
  const at = (name: string): number => index.get(name) ?? -1;
  const byValue = (prefix: string): Map<string, number> => {
    const out = new Map<string, number>();
    for (const [name, f] of index) if (name.startsWith(prefix)) out.set(name.slice(prefix.length), f);
    return out;
  };
  return {
    kev: at('kev'),
    cvssAbsent: at('cvss:absent'),
    cvssScore: at('cvss:score'),
    band: [at('cvss:band:critical'), at('cvss:band:high'), at('cvss:band:medium'), at('cvss:band:low')],
    vectorAbsent: at('vector:absent'),
    v3: V3_METRICS.map((m) => byValue(`v3:${m}:`)),
    v4: V4_METRICS.map((m) => byValue(`v4:${m}:`)),
    v3Cia: byValue('v3:CIA:'),
    v3Reach: byValue('v3:AVPRUI:'),
    v4Cia: byValue('v4:VCIA:'),
    v4Reach: byValue('v4:AVPRUI:'),
  };
}

function flatten(b: Booster): FlatBooster {
  const classes = b.base.length;
  let depth = 0;
  for (const round of b.trees) for (const t of round) depth = Math.max(depth, depthOf(t));
  const inner = 2 ** depth - 1;
  const leaves = 2 ** depth;
  const perRound = b.trees[0]?.length ?? classes;
  const trees = b.trees.length * perRound;
  const out: FlatBooster = {
    classes,
    perRound,
    depth,
    base: Float64Array.from(b.base),
    feature: new Int32Array(trees * inner),
    threshold: new Float64Array(trees * inner),
    leaf: new Float64Array(trees * leaves),
  };
  b.trees.forEach((round, r) =>
    round.forEach((t, c) => {
      const k = r * perRound + c;
      const fill = (node: number, heap: number, level: number): void => {
        if (level === depth) {
          out.leaf[k * leaves + heap - inner] = t.v[node] as number;
          return;
        }
        const leafHere = (t.f[node] as number) < 0;
        // A padding node: any value goes left (`x <= Infinity`), and both sides hold the same leaf.
        out.feature[k * inner + heap] = leafHere ? 0 : (t.f[node] as number);
        out.threshold[k * inner + heap] = leafHere ? Infinity : (t.t[node] as number);
        fill(leafHere ? node : (t.l[node] as number), 2 * heap + 1, level + 1);
        fill(leafHere ? node : (t.r[node] as number), 2 * heap + 2, level + 1);
      };
      fill(0, 0, 0);
    }),
  );
  return out;
}

/**
 * Class scores of a flattened booster: per class, base then every round's tree in round order.
 * Four rounds are walked side by side (their steps do not depend on each other, so the CPU
 * overlaps them); their leaves are still added one round after the other.
 */
function flatScores(b: FlatBooster, x: Float64Array): number[] {
  const k = b.perRound;
  const first = b.classes - k;
  const depth = b.depth;
  const inner = 2 ** depth - 1;
  const leaves = inner + 1;
  const rounds = b.leaf.length / leaves / k;
  const { feature, threshold, leaf } = b;
  const z: number[] = Array.from(b.base);
  for (let c = 0; c < k; c++) {
    let s = b.base[first + c] as number;
    let r = 0;
    for (; r + 4 <= rounds; r += 4) {
      const t0 = r * k + c;
      const t1 = t0 + k;
      const t2 = t1 + k;
      const t3 = t2 + k;
      const a0 = t0 * inner;
      const a1 = t1 * inner;
      const a2 = t2 * inner;
      const a3 = t3 * inner;
      let n0 = 0;
      let n1 = 0;
      let n2 = 0;
      let n3 = 0;
      for (let d = 0; d < depth; d++) {
        // Left when x <= threshold, as in `treeValue` (so NaN goes right).
        n0 = 2 * n0 + ((x[feature[a0 + n0] as number] as number) <= (threshold[a0 + n0] as number) ? 1 : 2);
        n1 = 2 * n1 + ((x[feature[a1 + n1] as number] as number) <= (threshold[a1 + n1] as number) ? 1 : 2);
        n2 = 2 * n2 + ((x[feature[a2 + n2] as number] as number) <= (threshold[a2 + n2] as number) ? 1 : 2);
        n3 = 2 * n3 + ((x[feature[a3 + n3] as number] as number) <= (threshold[a3 + n3] as number) ? 1 : 2);
      }
      s += leaf[t0 * leaves + n0 - inner] as number;
      s += leaf[t1 * leaves + n1 - inner] as number;
      s += leaf[t2 * leaves + n2 - inner] as number;
      s += leaf[t3 * leaves + n3 - inner] as number;
    }
    for (; r < rounds; r++) {
      const t = r * k + c;
      const a = t * inner;
      let n = 0;
      for (let d = 0; d < depth; d++) {
        n = 2 * n + ((x[feature[a + n] as number] as number) <= (threshold[a + n] as number) ? 1 : 2);
      }
      s += leaf[t * leaves + n - inner] as number;
    }
    z[first + c] = s;
  }
  return z;
}

/** Softmax with the additions and divisions in the order of the original `softmax`. */
export function softmax(z: number[]): number[] {
  let max = -Infinity;
  for (const v of z) if (v > max) max = v;
  const e = new Array<number>(z.length);
  let sum = 0;
  for (let i = 0; i < z.length; i++) {
    e[i] = Math.exp((z[i] as number) - max);
    sum += e[i] as number;
  }
  for (let i = 0; i < z.length; i++) e[i] = (e[i] as number) / sum;
  return e;
}

function isAlnum(ch: number): boolean {
  return (ch >= 97 && ch <= 122) || (ch >= 48 && ch <= 57);
}

/** Appends feature `f` (if the model has it and it is not in yet) with value `v`; answers the new count. */
function push(c: CompiledModel, n: number, f: number | undefined, v: number): number {
  if (f === undefined || f < 0 || c.stamp[f] === c.generation) return n;
  c.stamp[f] = c.generation;
  c.idx[n] = f;
  c.val[n] = v;
  return n + 1;
}

/**
 * Collects the input's model features (structured ones, then text terms in first-seen order,
 * each once) into the scratch arrays; answers how many.
 */
function collect(c: CompiledModel, input: FeatureInput, parsed: ReturnType<typeof parseCvssVector>): number {
  c.generation = (c.generation + 1) >>> 0;
  if (c.generation === 0) {
    c.stamp.fill(0);
    c.generation = 1;
  }
  let n = 0;
  // The structured features, in the order `structuredFeatures` lists them.
  const st = c.structured;
  if (input.kev) n = push(c, n, st.kev, 1);
  const score = input.cvssScore;
  if (score === null || !Number.isFinite(score)) {
    n = push(c, n, st.cvssAbsent, 1);
  } else {
    const sc = Math.min(10, Math.max(0, score));
    n = push(c, n, st.cvssScore, sc / 10);
    n = push(c, n, st.band[sc >= 9 ? 0 : sc >= 7 ? 1 : sc >= 4 ? 2 : 3], 1);
  }
  if (!parsed) {
    n = push(c, n, st.vectorAbsent, 1);
  } else if (parsed.version === 'v3') {
    const m = parsed.metrics;
    for (let j = 0; j < V3_METRICS.length; j++)
      n = push(c, n, st.v3[j]?.get(m[V3_METRICS[j] as string] as string), 1);
    n = push(c, n, st.v3Cia.get(`${m.C}${m.I}${m.A}`), 1);
    n = push(c, n, st.v3Reach.get(`${m.AV}${m.PR}${m.UI}`), 1);
  } else {
    const m = parsed.metrics;
    for (let j = 0; j < V4_METRICS.length; j++)
      n = push(c, n, st.v4[j]?.get(m[V4_METRICS[j] as string] as string), 1);
    n = push(c, n, st.v4Cia.get(`${m.VC}${m.VI}${m.VA}`), 1);
    n = push(c, n, st.v4Reach.get(`${m.AV}${m.PR}${m.UI}`), 1);
  }
  // The text terms, in `textTerms` order: each token's bigram with the token before it, then its unigram.
  const text = input.text.slice(0, TEXT_LIMIT).toLowerCase();
  let prev = -1;
  let i = 0;
  while (i < text.length) {
    if (!isAlnum(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    let letter = false;
    for (; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (ch >= 97 && ch <= 122) letter = true;
      else if (!(ch >= 48 && ch <= 57)) break;
    }
    // tokenize(): one-character tokens and bare numbers are not tokens at all.
    if (i - start < 2 || !letter) continue;
    const id = lookupToken(c.tokenId, text, start, i, -1);
    if (id < 0) {
      // Vocabulary terms are made of tokens, never of stopwords: a stopword is skipped, while any
      // other word outside the vocabulary still stands between its neighbours.
      if (id !== STOPWORD) prev = -1;
      continue;
    }
    if (prev >= 0) n = push(c, n, lookupPair(c.bigram, prev, id), 1);
    n = push(c, n, c.unigram[id], 1);
    prev = id;
  }
  return n;
}

/** Class probabilities (in `HEAD_CLASSES` order) of each logistic-regression head, before any rule. */
function headProbabilities(c: CompiledModel, n: number): Record<HeadName, number[]> {
  const { width, weights: w, sums: z } = c;
  z.set(c.bias);
  // Feature after feature, every class of every head: each class's sum still adds the features in
  // input order, starting from its bias, so it is the same number as a sum per class.
  for (let j = 0; j < n; j++) {
    const at = (c.idx[j] as number) * width;
    const v = c.val[j] as number;
    for (let cl = 0; cl < width; cl++) z[cl] = (z[cl] as number) + (w[at + cl] as number) * v;
  }
  const out = [] as number[][];
  for (let h = 0; h < HEADS.length; h++) {
    const o = c.offset[h] as number;
    out.push(softmax(Array.from(z.subarray(o, o + (c.classes[h] as number)))));
  }
  return {
    exploitation: out[0] as number[],
    automatable: out[1] as number[],
    technicalImpact: out[2] as number[],
  };
}

/** The text heads' probabilities of an input. */
export function compiledHeadProbabilities(
  model: CompilableModel,
  input: FeatureInput,
): Record<HeadName, number[]> {
  const c = compiledOf(model);
  return headProbabilities(c, collect(c, input, parseCvssVector(input.cvssVector)));
}

/** The heads' probabilities, then (when the model has one) the stacked stage's, which replace them. */
export function compiledProbabilities(
  model: CompilableModel,
  input: FeatureInput,
): Record<HeadName, number[]> {
  const c = compiledOf(model);
  const parsed = parseCvssVector(input.cvssVector);
  const heads = headProbabilities(c, collect(c, input, parsed));
  if (!c.boosters) return heads;
  const x = Float64Array.from(
    stackFeatures(
      input,
      {
        poc: heads.exploitation[1] as number,
        active: heads.exploitation[2] as number,
        automatable: heads.automatable[1] as number,
        total: heads.technicalImpact[1] as number,
      },
      parsed,
    ),
  );
  return {
    exploitation: softmax(flatScores(c.boosters[0] as FlatBooster, x)),
    automatable: softmax(flatScores(c.boosters[1] as FlatBooster, x)),
    technicalImpact: softmax(flatScores(c.boosters[2] as FlatBooster, x)),
  };
}
