import type { FieldError } from './errors.js';

/**
 * Text PostgreSQL cannot store: U+0000 (refused by text and jsonb) and lone UTF-16 surrogates
 * (JSON's `\ud800` escape, refused by jsonb). Either, anywhere in a request, would fail deep in
 * a statement as a 500, where DECISIONS §2 wants a 400 naming the field. They are found in the
 * parsed value (JSON escapes and form `%00` decoded), so an escaped backslash followed by
 * `u0000` is not mistaken for one. Returns one error per offending string, as JSON Pointers
 * under `path`, at most `max` of them. Only parsed JSON and form values are walked (arrays and
 * plain objects): a raw upload's stream is left alone.
 */
export function unstorableTextErrors(value: unknown, path = '', max = 20): FieldError[] {
  const errors: FieldError[] = [];
  const walk = (v: unknown, p: string): void => {
    if (errors.length >= max) return;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) errors.push({ path: p, message: problem });
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, `${p}/${i}`));
    } else if (isPlainObject(v)) {
      for (const [k, item] of Object.entries(v)) {
        const key = k.replace(/~/g, '~0').replace(/\//g, '~1');
        const problem = textProblem(k);
        if (problem) errors.push({ path: `${p}/${key}`, message: problem });
        walk(item, `${p}/${key}`);
      }
    }
  };
  walk(value, path);
  return errors;
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
