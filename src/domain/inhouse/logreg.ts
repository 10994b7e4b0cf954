/**
 * Multinomial logistic regression on sparse features, trained by mini-batch gradient
 * descent with Adam step sizes, a cosine-annealed learning rate and L2 weight decay. No ML library: the model is small
 * (a few thousand features, at most three classes per head) and must be reproducible
 * bit for bit, so everything here is plain loops in a fixed order with a seeded shuffle.
 */
export interface SparseRow {
  idx: number[];
  val: number[];
}

export interface LogregOptions {
  /** Seed of the mini-batch shuffle. @defaultValue 20261121 */
  seed: number;
  /** Passes over the training rows. @defaultValue 30 */
  epochs: number;
  /** @defaultValue 256 */
  batchSize: number;
  /** Adam step size. @defaultValue 0.05 */
  learningRate: number;
  /** L2 penalty on weights (not biases), per row. @defaultValue 3e-4 */
  l2: number;
}

export interface LogregWeights {
  bias: number[];
  /** `weights[class][feature]`. */
  weights: number[][];
}

/** mulberry32: a tiny seeded PRNG, enough for a reproducible shuffle. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled(n: number, rand: () => number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  return order;
}

/** Trains one softmax head; `labels[i]` is the class index of `rows[i]`. */
export function trainSoftmax(
  rows: readonly SparseRow[],
  labels: readonly number[],
  numFeatures: number,
  numClasses: number,
  opts: LogregOptions,
): LogregWeights {
  const k = numClasses;
  const d = numFeatures;
  // Parameters laid out as [class * (d + 1) + feature], the bias in slot d.
  const stride = d + 1;
  const w = new Float64Array(k * stride);
  const m = new Float64Array(k * stride);
  const v = new Float64Array(k * stride);
  const g = new Float64Array(k * stride);
  const beta1 = 0.9;
  const beta2 = 0.999;
  const eps = 1e-8;
  const rand = seededRandom(opts.seed);
  const z = new Float64Array(k);
  let step = 0;
  for (let epoch = 0; epoch < opts.epochs; epoch++) {
    // Cosine-annealed step size: large steps early, small ones at the end so the last
    // mini-batches do not leave the weights wherever their noise happened to push them.
    const lr = opts.learningRate * 0.5 * (1 + Math.cos((Math.PI * epoch) / opts.epochs));
    const order = shuffled(rows.length, rand);
    for (let start = 0; start < order.length; start += opts.batchSize) {
      const batch = order.slice(start, start + opts.batchSize);
      g.fill(0);
      for (const r of batch) {
        const row = rows[r] as SparseRow;
        let max = -Infinity;
        for (let c = 0; c < k; c++) {
          let s = w[c * stride + d] as number;
          for (let j = 0; j < row.idx.length; j++) {
            s += (w[c * stride + (row.idx[j] as number)] as number) * (row.val[j] as number);
          }
          z[c] = s;
          if (s > max) max = s;
        }
        let sum = 0;
        for (let c = 0; c < k; c++) {
          z[c] = Math.exp((z[c] as number) - max);
          sum += z[c] as number;
        }
        const y = labels[r] as number;
        for (let c = 0; c < k; c++) {
          const err = (z[c] as number) / sum - (c === y ? 1 : 0);
          for (let j = 0; j < row.idx.length; j++) {
            const at = c * stride + (row.idx[j] as number);
            g[at] = (g[at] as number) + err * (row.val[j] as number);
          }
          g[c * stride + d] = (g[c * stride + d] as number) + err;
        }
      }
      step++;
      const n = batch.length;
      const bc1 = 1 - beta1 ** step;
      const bc2 = 1 - beta2 ** step;
      // Every parameter in storage order, the bias (slot d) last of its class; no modulo per
      // parameter: this loop runs over the whole vocabulary each step and dominates training.
      for (let c = 0; c < k; c++) {
        const start = c * stride;
        for (let p = start; p <= start + d; p++) {
          const grad = (g[p] as number) / n + (p === start + d ? 0 : opts.l2 * (w[p] as number));
          const mp = beta1 * (m[p] as number) + (1 - beta1) * grad;
          const vp = beta2 * (v[p] as number) + (1 - beta2) * grad * grad;
          m[p] = mp;
          v[p] = vp;
          w[p] = (w[p] as number) - (lr * (mp / bc1)) / (Math.sqrt(vp / bc2) + eps);
        }
      }
    }
  }
  const weights: number[][] = [];
  const bias: number[] = [];
  for (let c = 0; c < k; c++) {
    weights.push(Array.from(w.subarray(c * stride, c * stride + d)));
    bias.push(w[c * stride + d] as number);
  }
  return { bias, weights };
}
