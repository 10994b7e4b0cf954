import type { FieldError } from './errors.js';

/** Deepest nesting of arrays and objects a request may have; no route's body comes near it. */
export const MAX_JSON_DEPTH = 32;

/**
 * Text PostgreSQL cannot store: U+0000 (refused by text and jsonb) and lone UTF-16 surrogates
 * (JSON's `\ud800` escape, refused by jsonb). Either, anywhere in a request, would fail deep in
 * a statement as a 500, where docs/api.md#errors wants a 400 naming the field. They are found in the
 * parsed value (JSON escapes and form `%00` decoded), so an escaped backslash followed by
 * `u0000` is not mistaken for one. Returns one error per offending string, as JSON Pointers
 * under `path`, at most `max` of them. Only parsed JSON and form values are walked (arrays and
 * plain objects): a raw upload's stream is left alone.
 *
 * Nesting deeper than {@link MAX_JSON_DEPTH} is an error too, at the first container past it:
 * 4 KB of `[` is 2,000 levels, which any recursive walk (this one once, Ajv's deep equality for
 * `uniqueItems`) overflows the stack on, a 500 for a body within the size limit. Hence this walk
 * keeps its own stack and stops descending there.
 */
export function unstorableTextErrors(value: unknown, path = '', max = 20): FieldError[] {
  const errors: FieldError[] = [];
  const stack: { v: unknown; p: string; depth: number }[] = [{ v: value, p: path, depth: 0 }];
  while (stack.length > 0 && errors.length < max) {
    const { v, p, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) errors.push({ path: p, message: problem });
      continue;
    }
    const isArray = Array.isArray(v);
    if (!isArray && !isPlainObject(v)) continue;
    if (depth >= MAX_JSON_DEPTH) {
      errors.push({ path: p || '/', message: `must not be nested more than ${MAX_JSON_DEPTH} levels deep` });
      continue;
    }
    const children: { v: unknown; p: string; depth: number }[] = [];
    if (isArray) {
      (v as unknown[]).forEach((item, i) => children.push({ v: item, p: `${p}/${i}`, depth: depth + 1 }));
    } else {
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        const key = `${p}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
        // A bad key is reported before what it holds, as the recursive walk did.
        children.push({ v: k, p: key, depth: depth + 1 }, { v: item, p: key, depth: depth + 1 });
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return errors.slice(0, max);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

const LONE_SURROGATE = /\p{Cs}/u;

/** Whether PostgreSQL can store `text` as text and jsonb. */
export function isStorableText(text: string): boolean {
  return textProblem(text) === null;
}

/** `text` without U+0000 and with each lone surrogate replaced by U+FFFD. */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '').replace(/\p{Cs}/gu, '\uFFFD');
}

function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode (it has a lone surrogate)';
  return null;
}
