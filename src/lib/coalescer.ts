/**
 * Coalescing (group commit, for writes): callers each hand in one item and get its own result
 * back, while the items go to the database together — one statement, one round trip and, for a
 * write, one commit for many.
 *
 * Nothing waits for a timer: when no flush is running, an item is flushed at once (alone, so
 * an idle system sees no extra latency); items that arrive while a flush runs are queued and
 * go together in the next one, up to `maxItems` at a time. Under load the groups grow by
 * themselves, which is exactly when fewer round trips pay.
 *
 * `flush` must return one result per item, in order. If it throws for a group of one, that item
 * fails with the error. If it throws for a larger group (written together, so none of them was
 * written), each of its items is flushed again alone, so one item that cannot be written fails
 * only itself and a transient error costs one more round trip per item.
 */
export interface Coalescer<T, R> {
  submit(item: T): Promise<R>;
}

interface Waiting<T, R> {
  item: T;
  resolve(result: R): void;
  reject(err: unknown): void;
}

export function createCoalescer<T, R>(
  flush: (items: T[]) => Promise<R[]>,
  options: { maxItems: number; concurrency?: number },
): Coalescer<T, R> {
  const concurrency = options.concurrency ?? 1;
  const queue: Waiting<T, R>[] = [];
  let running = 0;

  async function flushChecked(items: T[]): Promise<R[]> {
    const results = await flush(items);
    if (results.length !== items.length)
      throw new Error(`coalescer: ${results.length} results for ${items.length} items`);
    return results;
  }

  async function drain(): Promise<void> {
    running++;
    try {
      while (queue.length > 0) {
        const group = queue.splice(0, options.maxItems);
        try {
          const results = await flushChecked(group.map((w) => w.item));
          group.forEach((w, i) => w.resolve(results[i]!));
        } catch (err) {
          if (group.length === 1) group[0]!.reject(err);
          else
            await Promise.all(
              group.map((w) => flushChecked([w.item]).then(([r]) => w.resolve(r!), w.reject)),
            );
        }
      }
    } finally {
      running--;
    }
  }

  return {
    submit(item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (running < concurrency) void drain();
      });
    },
  };
}
