import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { nulCharacterErrors } from '../../../src/lib/nul-check.js';

describe('nulCharacterErrors', () => {
  it('names every string that holds U+0000, as JSON Pointers', () => {
    const body = JSON.parse(
      '{"title":"a\\u0000b","items":[{"x":"ok"},{"x":"\\u0000"}],"a/b":{"c~d":"\\u0000"}}',
    );
    expect(nulCharacterErrors(body)).toEqual([
      { path: '/title', message: 'must not contain the NUL character (U+0000)' },
      { path: '/items/1/x', message: 'must not contain the NUL character (U+0000)' },
      { path: '/a~1b/c~0d', message: 'must not contain the NUL character (U+0000)' },
    ]);
  });

  it('does not mistake an escaped backslash followed by u0000 for a NUL', () => {
    expect(nulCharacterErrors(JSON.parse('{"path":"C:\\\\u0000\\\\file"}'))).toEqual([]);
  });

  it('finds NUL in keys, in query strings under their prefix, and stops at `max`', () => {
    expect(nulCharacterErrors({ 'a\u0000': 1 })).toHaveLength(1);
    expect(nulCharacterErrors({ name: 'x\u0000' }, '/querystring')).toEqual([
      { path: '/querystring/name', message: 'must not contain the NUL character (U+0000)' },
    ]);
    expect(
      nulCharacterErrors(
        Array.from({ length: 50 }, () => '\u0000'),
        '',
        5,
      ),
    ).toHaveLength(5);
  });

  it('leaves streams and other non-plain objects alone', () => {
    expect(nulCharacterErrors(Readable.from(['\u0000']))).toEqual([]);
    expect(nulCharacterErrors(undefined)).toEqual([]);
    expect(nulCharacterErrors(null)).toEqual([]);
  });
});
