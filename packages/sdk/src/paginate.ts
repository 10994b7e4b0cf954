/** One page of a list (docs/api.md#lists-and-paging). */
export interface Page<T> {
  data: T[];
  nextCursor?: string | null;
}

/**
 * Every item of a paged list, fetching the next page only when the previous one is used up:
 * `fetchPage` is given `undefined`, then each page's `nextCursor`, until a page has none.
 *
 * ```ts
 * for await (const c of paginate((cursor) =>
 *   unwrap(client.GET('/api/v1/cases', { params: { query: { status: 'open', limit: 200, cursor } } }))))
 * ```
 */
export async function* paginate<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>> | Page<T>,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield* page.data;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
}

/** Every item of a paged list, as one array (mind the memory: prefer {@link paginate} for large lists). */
export async function collectAll<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
