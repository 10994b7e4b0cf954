import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUp, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { problemDocument } from '../../helpers/problem.js';
import { AUDIT_ACTIONS } from '../../../src/db/entities/index.js';

/** `GET /api/v1/audit-events`, refusals: every malformed filter is a 400 naming its parameter. */
let t: TestApp;
let admin: { id: string; key: string };

beforeAll(async () => {
  t = await startTestApp();
  const owner = await signUp(t.app, { plan: 'free' });
  admin = await createKey(t.app, owner, ['keys:write'], 'audit admin');
});
afterAll(async () => {
  await t?.close();
});

const list = (query: string) =>
  t.app.inject({ method: 'GET', url: `/api/v1/audit-events${query}`, headers: { 'x-api-key': admin.key } });

const invalid = (errors: { path: string; message: string }[]) => ({
  ...problemDocument(
    400,
    'invalid_request',
    'Invalid request',
    'The request has invalid fields; see errors.',
  ),
  errors,
});

const WHEN = 'must be a date (YYYY-MM-DD, UTC) or an ISO 8601 instant with a time zone';

describe('GET /api/v1/audit-events refuses malformed filters with the whole problem body', () => {
  it.each([
    [
      '?action=delete',
      [
        {
          path: '/querystring/action',
          message: `must be one of ${AUDIT_ACTIONS.join(', ')}`,
        },
      ],
    ],
    ['?key=not-a-key', [{ path: '/querystring/key', message: 'must be a key id (a UUID)' }]],
    ['?from=yesterday', [{ path: '/querystring/from', message: WHEN }]],
    ['?to=2026-02-30', [{ path: '/querystring/to', message: WHEN }]],
    ['?from=2026-11-01T10:00', [{ path: '/querystring/from', message: WHEN }]],
    ['?from=2026-11-02&to=2026-11-01', [{ path: '/querystring/from', message: 'must not be after to' }]],
    ['?limit=0', [{ path: '/querystring/limit', message: 'must be >= 1' }]],
    ['?limit=201', [{ path: '/querystring/limit', message: 'must be <= 200' }]],
    ['?page=2', [{ path: '/querystring/page', message: 'is not an allowed field' }]],
  ])('%s', async (query, errors) => {
    const res = await list(query);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toEqual(invalid(errors));
  });

  it('a tampered cursor is a 400 at /querystring/cursor, never a SQL error', async () => {
    for (const cursor of ['abc', Buffer.from('{"s":"1; DROP TABLE x"}').toString('base64url')]) {
      const res = await list(`?cursor=${cursor}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        ...problemDocument(
          400,
          'invalid_request',
          'Invalid request',
          'The cursor is not valid; pass back nextCursor unchanged.',
        ),
        errors: [{ path: '/querystring/cursor', message: 'is not a valid cursor' }],
      });
    }
  });
});
