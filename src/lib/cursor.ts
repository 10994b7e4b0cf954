import { AppError } from './errors.js';

/**
 * Opaque keyset cursors for every paged list (docs/api.md#lists-and-paging): base64url of the position of
 * the last row returned — an insertion sequence (scans, findings, cases; unlike a timestamp it
 * never ties) or an item index (batch results). A tampered cursor is a 400, never a SQL error.
 */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export function encodeCursor(p: { s: string; k?: string; v?: string | number }): string {
  return Buffer.from(JSON.stringify(p), 'utf8').toString('base64url');
}

const badCursor = (): AppError =>
  new AppError('invalid_request', 'The cursor is not valid; pass back nextCursor unchanged.', {
    errors: [{ path: '/querystring/cursor', message: 'is not a valid cursor' }],
  });

/** The cursor's fields, or a 400 when it is not one of ours. */
function decode(cursor: string): { s: string; k?: unknown; v?: unknown } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  const p = parsed as { s?: unknown; k?: unknown; v?: unknown } | null;
  if (typeof p !== 'object' || p === null || typeof p.s !== 'string' || !/^\d{1,18}$/.test(p.s))
    throw badCursor();
  return p as { s: string; k?: unknown; v?: unknown };
}

/** The sequence number a cursor points after. */
export function seqCursor(cursor: string): string {
  return decode(cursor).s;
}

/**
 * The position a cursor of a sorted list points after: the sort key `v` of the last row and its
 * sequence `s` (the tie-break). A cursor made under another sort (or none) is a 400, since its
 * position means nothing in this order; `valid` checks the key's type.
 */
export function sortedCursor<V>(
  cursor: string,
  sort: string,
  valid: (v: unknown) => v is V,
): { s: string; v: V } {
  const p = decode(cursor);
  if (p.k !== sort || !valid(p.v)) {
    throw new AppError(
      'invalid_request',
      'The cursor belongs to another sort order; pass back nextCursor with the same sort.',
      { errors: [{ path: '/querystring/cursor', message: 'is not a cursor of this sort order' }] },
    );
  }
  return { s: p.s, v: p.v };
}

/** Like {@link seqCursor}, and a cursor made under a sort is a 400 in the list's default order. */
export function unsortedCursor(cursor: string): string {
  const p = decode(cursor);
  if (p.k !== undefined) {
    throw new AppError(
      'invalid_request',
      'The cursor belongs to a sorted list; pass it back with the same sort.',
      { errors: [{ path: '/querystring/cursor', message: 'is not a cursor of this sort order' }] },
    );
  }
  return p.s;
}

/**
 * A page of a sorted list from rows fetched with `LIMIT limit + 1`, each carrying its sort key
 * `sort_v` and `seq`: the cursor names the sort, so it is refused under another one.
 */
export function sortedPage<T extends { seq: string | number | bigint; sort_v: string | number }>(
  rows: T[],
  limit: number,
  sort: string,
): Page<T> {
  const more = rows.length > limit;
  const data = more ? rows.slice(0, limit) : rows;
  const last = data[data.length - 1];
  return {
    data,
    nextCursor: more && last ? encodeCursor({ s: String(last.seq), k: sort, v: last.sort_v }) : null,
  };
}

/**
 * A page from rows fetched with `LIMIT limit + 1`, newest first by `seq`: the extra row only
 * says there is more, and the cursor points after the last row returned.
 */
export function seqPage<T extends { seq: string | number | bigint }>(rows: T[], limit: number): Page<T> {
  const more = rows.length > limit;
  const data = more ? rows.slice(0, limit) : rows;
  const last = data[data.length - 1];
  return { data, nextCursor: more && last ? encodeCursor({ s: String(last.seq) }) : null };
}
