import { describe, expect, it } from 'vitest';
import { lookupPair, lookupToken, pairTable, tokenTable } from '../../../src/domain/inhouse/token-table.js';

describe('token tables of the compiled predictor', () => {
  it('finds every key by a range of a text, and nothing else', () => {
    const words = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}-`);
    const table = tokenTable(words.map((w, i) => [w, i] as const));
    const text = ` ${words.join(' ')} `;
    let at = 1;
    words.forEach((w, i) => {
      expect(lookupToken(table, text, at, at + w.length, -1)).toBe(i);
      // A prefix or a longer range of the same characters is another key.
      expect(lookupToken(table, text, at, at + w.length - 1, -1)).toBe(-1);
      expect(lookupToken(table, text, at - 1, at + w.length, -1)).toBe(-1);
      at += w.length + 1;
    });
    expect(lookupToken(table, 'remote', 0, 6, -7)).toBe(-7);
    expect(lookupToken(tokenTable([]), 'remote', 0, 6, -1)).toBe(-1);
  });

  it('keeps the first value of a key given twice (a vocabulary token before a stopword)', () => {
    const table = tokenTable([
      ['via', 3],
      ['via', -2],
      ['the', -2],
    ]);
    expect(lookupToken(table, 'via the', 0, 3, -1)).toBe(3);
    expect(lookupToken(table, 'via the', 4, 7, -1)).toBe(-2);
  });

  it('finds pairs in order, and not their reverse', () => {
    const entries = Array.from({ length: 3000 }, (_, i) => [i % 97, Math.floor(i / 97), i] as const);
    const table = pairTable(entries);
    for (const [a, b, v] of entries) expect(lookupPair(table, a, b)).toBe(v);
    expect(lookupPair(table, 96, 96)).toBe(-1);
    expect(lookupPair(pairTable([[1, 2, 5]]), 2, 1)).toBe(-1);
  });
});
