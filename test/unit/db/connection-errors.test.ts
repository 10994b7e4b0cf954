import { describe, expect, it } from 'vitest';
import { databaseUnavailable, isConnectionLost } from '../../../src/db/connection-errors.js';
import { isReadOnlyStatement } from '../../../src/db/pool.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isConnectionLost', () => {
  it.each([
    ['57P01 admin shutdown (pg_terminate_backend)', withCode('57P01')],
    ['57P02 crash shutdown', withCode('57P02')],
    ['57P03 cannot connect now', withCode('57P03')],
    ['53300 too many connections', withCode('53300')],
    ['08000 connection exception', withCode('08000')],
    ['08003 connection does not exist', withCode('08003')],
    ['08006 connection failure', withCode('08006')],
    ['ECONNRESET', withCode('ECONNRESET')],
    ['ECONNREFUSED', withCode('ECONNREFUSED')],
    ['a socket ended under pg', new Error('Connection terminated unexpectedly')],
    ['a pool that waited too long', new Error('timeout exceeded when trying to connect')],
    ['a client already broken', new Error('Client has encountered a connection error and is not queryable')],
    ['one wrapped in a cause', new Error('query failed', { cause: withCode('57P01') })],
    ['every address refused', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')])],
  ])('recognises %s', (_, err) => {
    expect(isConnectionLost(err)).toBe(true);
  });

  it.each([
    ['a unique violation', withCode('23505')],
    ['a deadlock', withCode('40P01')],
    ['a serialization failure', withCode('40001')],
    ['a syntax error', withCode('42601')],
    ['a plain error', new Error('boom')],
    ['not an error', 'Connection terminated unexpectedly'],
    ['null', null],
  ])('leaves %s alone', (_, err) => {
    expect(isConnectionLost(err)).toBe(false);
  });

  it('becomes 503 overloaded with Retry-After', () => {
    const err = databaseUnavailable(withCode('57P01'));
    expect(err).toMatchObject({ code: 'overloaded', status: 503 });
    expect(err.options.headers).toEqual({ 'Retry-After': '2' });
  });
});

describe('isReadOnlyStatement', () => {
  it.each([
    'SELECT * FROM cases WHERE id = $1',
    '  select count(*) from findings',
    'VALUES (1)',
    'SHOW server_version',
  ])('retries %s', (text) => {
    expect(isReadOnlyStatement(text)).toBe(true);
  });

  it.each([
    'INSERT INTO cases VALUES ($1)',
    'UPDATE cases SET status = $2',
    'DELETE FROM sessions',
    'WITH x AS (SELECT 1) UPDATE cases SET status = $1',
    'WITH x AS (SELECT 1) SELECT * FROM x',
    'SELECT * FROM cases WHERE id = $1 FOR UPDATE',
    'SELECT * FROM cases FOR SHARE',
    'SELECT nextval($1)',
    'SELECT pg_notify($1, $2)',
    'SELECT pg_advisory_lock(1)',
    'SELECT id FROM (DELETE FROM x RETURNING id) d',
  ])('never retries %s', (text) => {
    expect(isReadOnlyStatement(text)).toBe(false);
  });
});
