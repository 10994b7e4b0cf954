/**
 * Friendly refusals for JSON-schema `pattern`s. Ajv's own message quotes the regular expression
 * (`must match pattern "^(open|in_progress…)$"`), which tells a caller little and shows them our
 * internals; a pattern declared through `describedPattern` is refused with its message instead,
 * and any other with a generic one (`api/plugins/problem.ts`).
 */
const messages = new Map<string, string>();

/** Returns `pattern`, remembering that a value it refuses "must be …" as `message` says. */
export function describedPattern(pattern: string, message: string): string {
  messages.set(pattern, message);
  return pattern;
}

/** The message registered for `pattern`, or a generic one: a refusal never quotes a regex. */
export function patternMessage(pattern: string): string {
  return messages.get(pattern) ?? 'is not in the expected format';
}
