import { describe, expect, it } from 'vitest';
import {
  boosterScores,
  DEFAULT_GBT_OPTIONS,
  trainBooster,
  treeValue,
} from '../../../src/domain/inhouse/gbt.js';

/** Class 1 exactly when both features are above 0.5: no single split separates it (an interaction). */
function xorLike(n: number): { x: number[][]; y: number[] } {
  const x: number[][] = [];
  const y: number[] = [];
  for (let i = 0; i < n; i++) {
    const a = (i % 17) / 16;
    const b = ((i * 7) % 13) / 12;
    x.push([a, b, i % 3]);
    y.push(a > 0.5 && b > 0.5 ? 1 : 0);
  }
  return { x, y };
}

function predict(booster: ReturnType<typeof trainBooster>, row: number[]): number {
  const z = boosterScores(booster, row);
  return z.indexOf(Math.max(...z));
}

describe('gradient-boosted trees', () => {
  it('learns an interaction of two features that one split cannot', () => {
    const { x, y } = xorLike(400);
    const booster = trainBooster(x, y, 2, {
      ...DEFAULT_GBT_OPTIONS,
      rounds: 30,
      depth: 2,
      minChildWeight: 1,
    });
    const right = x.filter((row, i) => predict(booster, row) === y[i]).length;
    expect(right / x.length).toBeGreaterThan(0.97);
    expect(predict(booster, [0.9, 0.9, 0])).toBe(1);
    expect(predict(booster, [0.9, 0.1, 0])).toBe(0);
  });

  it('gives the same trees for the same rows (deterministic)', () => {
    const { x, y } = xorLike(300);
    const a = trainBooster(x, y, 2, { ...DEFAULT_GBT_OPTIONS, rounds: 10 });
    const b = trainBooster(x, y, 2, { ...DEFAULT_GBT_OPTIONS, rounds: 10 });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
  });

  it('walks a tree: x <= threshold goes left', () => {
    const tree = { f: [0, -1, -1], t: [0.5, 0, 0], l: [1, -1, -1], r: [2, -1, -1], v: [0, -1, 1] };
    expect(treeValue(tree, [0.5])).toBe(-1);
    expect(treeValue(tree, [0.51])).toBe(1);
  });

  it('starts from the log prior of each class and stays within depth', () => {
    const x = [[0], [1], [1], [1]];
    const booster = trainBooster(x, [0, 1, 1, 1], 2, {
      ...DEFAULT_GBT_OPTIONS,
      rounds: 3,
      depth: 1,
      minChildWeight: 0,
    });
    expect(booster.base[1]).toBeGreaterThan(booster.base[0] as number);
    for (const round of booster.trees) for (const t of round) expect(t.f.length).toBeLessThanOrEqual(3);
  });
});
