import { describe, expect, it } from 'vitest';
import { groupBy } from '../../../src/lib/group-by.js';

describe('groupBy', () => {
  it('keeps the items of a group in their order and the groups in the order their keys first appear', () => {
    const rows = [
      { ws: 'b', id: 1 },
      { ws: 'a', id: 2 },
      { ws: 'b', id: 3 },
    ];
    expect([
      ...groupBy(
        rows,
        (r) => r.ws,
        (r) => r.id,
      ),
    ]).toEqual([
      ['b', [1, 3]],
      ['a', [2]],
    ]);
  });

  it('gives no group for no items', () => {
    expect(groupBy([], String, String).size).toBe(0);
  });
});
