import { describe, expect, it } from 'vitest';
import { createCoalescer } from '../../../src/lib/coalescer.js';

function deferred() {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return { done, release };
}

describe('coalescer', () => {
  it('flushes a lone item at once, and groups the items that arrive during a flush', async () => {
    const groups: number[][] = [];
    const gate = deferred();
    const c = createCoalescer(
      async (items: number[]) => {
        groups.push(items);
        if (groups.length === 1) await gate.done;
        return items.map((i) => i * 10);
      },
      { maxItems: 3 },
    );
    const first = c.submit(1);
    expect(groups).toEqual([[1]]); // no timer: the first item went alone, synchronously
    const rest = [2, 3, 4, 5, 6].map((i) => c.submit(i));
    gate.release();
    expect(await Promise.all([first, ...rest])).toEqual([10, 20, 30, 40, 50, 60]);
    expect(groups).toEqual([[1], [2, 3, 4], [5, 6]]);
  });

  it('flushes the items of a failed group again one by one: only the one that cannot be written fails', async () => {
    const gate = deferred();
    let calls = 0;
    const c = createCoalescer(
      async (items: string[]) => {
        calls++;
        if (calls === 1) await gate.done;
        if (items.includes('bad')) throw new Error('constraint violated');
        return items.map((s) => s.toUpperCase());
      },
      { maxItems: 2 },
    );
    const a = c.submit('a');
    const b = c.submit('b');
    const bad = c.submit('bad');
    const d = c.submit('d');
    const badFails = expect(bad).rejects.toThrow('constraint violated');
    gate.release();
    expect(await a).toBe('A');
    expect(await b).toBe('B'); // its group [b, bad] failed; alone it is written
    await badFails;
    expect(await d).toBe('D');
  });

  it('rejects a flush that returns the wrong number of results', async () => {
    const c = createCoalescer(async () => [], { maxItems: 4 });
    await expect(c.submit(1)).rejects.toThrow('0 results for 1 items');
  });

  it('runs up to `concurrency` flushes at once', async () => {
    let running = 0;
    let peak = 0;
    const c = createCoalescer(
      async (items: number[]) => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        return items;
      },
      { maxItems: 1, concurrency: 2 },
    );
    await Promise.all([1, 2, 3, 4, 5].map((i) => c.submit(i)));
    expect(peak).toBe(2);
  });
});
