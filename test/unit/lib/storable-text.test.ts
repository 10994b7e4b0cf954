import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, unstorableTextErrors } from '../../../src/lib/storable-text.js';

describe('unstorableTextErrors', () => {
  it('names every string that holds U+0000, as JSON Pointers', () => {
    const body = JSON.parse(
      '{"title":"a\\u0000b","items":[{"x":"ok"},{"x":"\\u0000"}],"a/b":{"c~d":"\\u0000"}}',
    );
    expect(unstorableTextErrors(body)).toEqual([
      { path: '/title', message: 'must not contain the NUL character (U+0000)' },
      { path: '/items/1/x', message: 'must not contain the NUL character (U+0000)' },
      { path: '/a~1b/c~0d', message: 'must not contain the NUL character (U+0000)' },
    ]);
  });

  it('does not mistake an escaped backslash followed by u0000 for a NUL', () => {
    expect(unstorableTextErrors(JSON.parse('{"path":"C:\\\\u0000\\\\file"}'))).toEqual([]);
  });

  it('finds NUL in keys, in query strings under their prefix, and stops at `max`', () => {
    expect(unstorableTextErrors({ 'a\u0000': 1 })).toHaveLength(1);
    expect(unstorableTextErrors({ name: 'x\u0000' }, '/querystring')).toEqual([
      { path: '/querystring/name', message: 'must not contain the NUL character (U+0000)' },
    ]);
    expect(
      unstorableTextErrors(
        Array.from({ length: 50 }, () => '\u0000'),
        '',
        5,
      ),
    ).toHaveLength(5);
  });

  it('names lone surrogates, and accepts well-formed pairs', () => {
    expect(unstorableTextErrors(JSON.parse('{"a":"x\\ud800y","b":"\\udfff","ok":"\\ud83d\\ude00"}'))).toEqual(
      [
        { path: '/a', message: 'must be well-formed Unicode (it has a lone surrogate)' },
        { path: '/b', message: 'must be well-formed Unicode (it has a lone surrogate)' },
      ],
    );
  });

  it('leaves streams and other non-plain objects alone', () => {
    expect(unstorableTextErrors(Readable.from(['\u0000']))).toEqual([]);
    expect(unstorableTextErrors(undefined)).toEqual([]);
    expect(unstorableTextErrors(null)).toEqual([]);
  });

  it('walks a body nested far past MAX_JSON_DEPTH without recursion, naming the first level too deep', () => {
    const deep = JSON.parse(`{"a":{"b":${'['.repeat(200_000)}${']'.repeat(200_000)}}}`);
    expect(unstorableTextErrors(deep)).toEqual([
      {
        path: `/a/b${'/0'.repeat(MAX_JSON_DEPTH - 2)}`,
        message: `must not be nested more than ${MAX_JSON_DEPTH} levels deep`,
      },
    ]);
    // At the limit, nothing to say; its strings are still checked.
    const atLimit = JSON.parse(`${'['.repeat(MAX_JSON_DEPTH)}"x\\u0000"${']'.repeat(MAX_JSON_DEPTH)}`);
    expect(unstorableTextErrors(atLimit)).toEqual([
      {
        path: '/0'.repeat(MAX_JSON_DEPTH - 1) + '/0',
        message: 'must not contain the NUL character (U+0000)',
      },
    ]);
  });
});
