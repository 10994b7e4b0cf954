import { AppError } from './errors.js';

/**
 * Opaque keyset cursors for every paged list (DECISIONS §7, §10): base64url of the position of
 * the last row returned — an insertion sequence (scans, findings, cases; unlike a timestamp it
 * never ties) or an item index (batch results). A tampered cursor is a 400, never a SQL error.
 */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export function encodeCursor(p: { s: string }): string {
  return Buffer.from(JSON.stringify(p), 'utf8').toString('base64url');
}

const badCursor = (): AppError =>
  new AppError('invalid_request', 'The cursor is not valid; pass back nextCursor unchanged.', {
    errors: [{ path: '/querystring/cursor', message: 'is not a valid cursor' }],
  });

/** The sequence number a cursor points after. */
export function seqCursor(cursor: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  const s = (parsed as { s?: unknown } | null)?.s;
  if (typeof s !== 'string' || !/^\d{1,18}$/.test(s)) throw badCursor();
  return s;
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
