import type { FieldError } from './errors.js';

/**
 * PostgreSQL cannot store U+0000 in text or jsonb, so a NUL anywhere in a request would fail
 * deep in a statement as a 500 (DECISIONS §2 wants a 400 naming the field). JSON can carry it
 * only as the `\u0000` escape and forms as `%00`; this finds it in the parsed value instead,
 * so an escaped backslash followed by `u0000` is not mistaken for one. Returns one error per
 * offending string, as JSON Pointers under `path`, at most `max` of them. Only parsed JSON and
 * form values are walked (arrays and plain objects): a raw upload's stream is left alone.
 */
export function nulCharacterErrors(value: unknown, path = '', max = 20): FieldError[] {
  const errors: FieldError[] = [];
  const walk = (v: unknown, p: string): void => {
    if (errors.length >= max) return;
    if (typeof v === 'string') {
      if (v.includes('\u0000'))
        errors.push({ path: p, message: 'must not contain the NUL character (U+0000)' });
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, `${p}/${i}`));
    } else if (isPlainObject(v)) {
      for (const [k, item] of Object.entries(v)) {
        const key = k.replace(/~/g, '~0').replace(/\//g, '~1');
        if (k.includes('\u0000'))
          errors.push({ path: `${p}/${key}`, message: 'must not contain the NUL character (U+0000)' });
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
