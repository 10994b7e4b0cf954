/**
 * Gradient-boosted regression trees with softmax loss, for the stacked stage of the in-house
 * model (src/domain/inhouse/README.md#model). Small dense inputs (a few dozen features), depth-
 * limited trees, Newton leaf values, shrinkage. No ML library and no randomness: every row is used
 * in every round, candidate thresholds are quantiles of the training values, and ties between
 * splits go to the first feature and threshold in loop order, so the same rows and options give
 * the same trees bit for bit.
 */

/** A tree as flat arrays: node `n` is a leaf when `f[n] < 0`; otherwise `x[f[n]] <= t[n]` goes to `l[n]`, else `r[n]`. */
export interface Tree {
  f: number[];
  t: number[];
  l: number[];
  r: number[];
  v: number[];
}

/**
 * One booster per decision point: `trees[round][class]`, scores start at `base[class]`. A booster
 * of two classes fits one tree a round, the score of class 1 (class 0 stays at its base): softmax
 * over two scores depends only on their difference, so a second tree would only double the walks.
 */
export interface Booster {
  base: number[];
  trees: Tree[][];
}

export interface GbtOptions {
  /** Boosting rounds. @defaultValue 120 */
  rounds: number;
  /** Largest tree depth. @defaultValue 3 */
  depth: number;
  /** Shrinkage applied to every leaf value. @defaultValue 0.1 */
  shrinkage: number;
  /** L2 penalty on leaf values (added to the hessian sum). @defaultValue 1 */
  lambda: number;
  /** Smallest hessian sum a leaf may have. @defaultValue 5 */
  minChildWeight: number;
  /** Most candidate thresholds per feature. @defaultValue 64 */
  bins: number;
  /** Decimal places leaf values and thresholds are rounded to in the model file. @defaultValue 6 */
  decimals: number;
}

export const DEFAULT_GBT_OPTIONS: Readonly<GbtOptions> = Object.freeze({
  rounds: 120,
  depth: 3,
  shrinkage: 0.1,
  lambda: 1,
  minChildWeight: 5,
  bins: 64,
  decimals: 6,
});

export function treeValue(tree: Tree, x: readonly number[]): number {
  let n = 0;
  while ((tree.f[n] as number) >= 0) {
    n =
      (x[tree.f[n] as number] as number) <= (tree.t[n] as number)
        ? (tree.l[n] as number)
        : (tree.r[n] as number);
  }
  return tree.v[n] as number;
}

/** Class scores (logits) of a booster for one dense row. */
export function boosterScores(b: Booster, x: readonly number[]): number[] {
  const z = b.base.slice();
  for (const round of b.trees) {
    // Two classes, one tree: it scores class 1.
    const first = z.length - round.length;
    for (let c = 0; c < round.length; c++)
      z[first + c] = (z[first + c] as number) + treeValue(round[c] as Tree, x);
  }
  return z;
}

function softmaxInPlace(z: number[]): void {
  let max = -Infinity;
  for (const v of z) if (v > max) max = v;
  let sum = 0;
  for (let i = 0; i < z.length; i++) {
    z[i] = Math.exp((z[i] as number) - max);
    sum += z[i] as number;
  }
  for (let i = 0; i < z.length; i++) z[i] = (z[i] as number) / sum;
}

/** Candidate thresholds of one feature: up to `bins` distinct quantile values, ascending. */
function thresholdsOf(values: number[], bins: number): number[] {
  const sorted = values.slice().sort((a, b) => a - b);
  const distinct: number[] = [];
  for (const v of sorted) if (distinct.length === 0 || v !== distinct[distinct.length - 1]) distinct.push(v);
  if (distinct.length <= bins) return distinct.slice(0, -1);
  const out: number[] = [];
  for (let k = 1; k < bins; k++) {
    const v = sorted[Math.floor((k * sorted.length) / bins)] as number;
    if (out.length === 0 || v > (out[out.length - 1] as number)) out.push(v);
  }
  return out.filter((v) => v < (distinct[distinct.length - 1] as number));
}

/**
 * Fits a softmax booster: `x[row][feature]` dense, `y[row]` a class index in `[0, classes)`.
 */
export function trainBooster(
  x: readonly (readonly number[])[],
  y: readonly number[],
  classes: number,
  options: GbtOptions = DEFAULT_GBT_OPTIONS,
): Booster {
  const n = x.length;
  const d = n === 0 ? 0 : (x[0] as readonly number[]).length;
  const scale = 10 ** options.decimals;
  const round = (v: number): number => Math.round(v * scale) / scale + 0;
  const thresholds: number[][] = [];
  const bin: Uint8Array[] = [];
  for (let j = 0; j < d; j++) {
    const column = x.map((row) => row[j] as number);
    const t = thresholdsOf(column, options.bins).map(round);
    thresholds.push(t);
    const b = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      let k = 0;
      while (k < t.length && (column[i] as number) > (t[k] as number)) k++;
      b[i] = k;
    }
    bin.push(b);
  }
  // Base score: log class frequency (smoothed), so round one starts from the prior.
  const counts = new Array<number>(classes).fill(1);
  for (const c of y) counts[c] = (counts[c] as number) + 1;
  const base = counts.map((c) => round(Math.log(c / (n + classes))));
  const scores = x.map(() => base.slice());
  const trees: Tree[][] = [];
  const g = new Float64Array(n);
  const h = new Float64Array(n);
  const all = Array.from({ length: n }, (_, i) => i);
  for (let r = 0; r < options.rounds; r++) {
    const probs = scores.map((z) => {
      const p = z.slice();
      softmaxInPlace(p);
      return p;
    });
    const roundTrees: Tree[] = [];
    for (let c = classes === 2 ? 1 : 0; c < classes; c++) {
      for (let i = 0; i < n; i++) {
        const p = (probs[i] as number[])[c] as number;
        g[i] = p - (y[i] === c ? 1 : 0);
        h[i] = Math.max(p * (1 - p), 1e-6);
      }
      const tree: Tree = { f: [], t: [], l: [], r: [], v: [] };
      grow(tree, all, 0);
      roundTrees.push(tree);
      for (let i = 0; i < n; i++) {
        const z = scores[i] as number[];
        z[c] = (z[c] as number) + treeValue(tree, x[i] as readonly number[]);
      }
    }
    trees.push(roundTrees);
  }
  return { base, trees };

  function grow(tree: Tree, rows: number[], depth: number): number {
    const node = tree.f.length;
    tree.f.push(-1);
    tree.t.push(0);
    tree.l.push(-1);
    tree.r.push(-1);
    tree.v.push(0);
    let gs = 0;
    let hs = 0;
    for (const i of rows) {
      gs += g[i] as number;
      hs += h[i] as number;
    }
    const leaf = round((-gs / (hs + options.lambda)) * options.shrinkage);
    if (depth >= options.depth || rows.length < 2) {
      tree.v[node] = leaf;
      return node;
    }
    const parent = (gs * gs) / (hs + options.lambda);
    let bestGain = 1e-9;
    let bestF = -1;
    let bestK = -1;
    for (let j = 0; j < d; j++) {
      const t = thresholds[j] as number[];
      if (t.length === 0) continue;
      const gh = new Float64Array(t.length + 1);
      const hh = new Float64Array(t.length + 1);
      const b = bin[j] as Uint8Array;
      for (const i of rows) {
        const k = b[i] as number;
        gh[k] = (gh[k] as number) + (g[i] as number);
        hh[k] = (hh[k] as number) + (h[i] as number);
      }
      let gl = 0;
      let hl = 0;
      for (let k = 0; k < t.length; k++) {
        gl += gh[k] as number;
        hl += hh[k] as number;
        const gr = gs - gl;
        const hr = hs - hl;
        if (hl < options.minChildWeight || hr < options.minChildWeight) continue;
        const gain = (gl * gl) / (hl + options.lambda) + (gr * gr) / (hr + options.lambda) - parent;
        if (gain > bestGain) {
          bestGain = gain;
          bestF = j;
          bestK = k;
        }
      }
    }
    if (bestF < 0) {
      tree.v[node] = leaf;
      return node;
    }
    const b = bin[bestF] as Uint8Array;
    const left = rows.filter((i) => (b[i] as number) <= bestK);
    const right = rows.filter((i) => (b[i] as number) > bestK);
    tree.f[node] = bestF;
    tree.t[node] = (thresholds[bestF] as number[])[bestK] as number;
    tree.l[node] = grow(tree, left, depth + 1);
    tree.r[node] = grow(tree, right, depth + 1);
    return node;
  }
}
