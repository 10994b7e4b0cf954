import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { problemDocument } from '../../helpers/problem.js';

/** `GET /api/v1/triage/batch/:id` through `TriageService.batchStatus` (no worker: items stay queued). */
let t: TestApp;
let owner: Awaited<ReturnType<typeof signUp>>;
let batchId: string;

beforeAll(async () => {
  t = await startTestApp();
  owner = await signUp(t.app, { plan: 'trial' });
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/triage/batch',
    headers: { 'x-api-key': owner.key },
    payload: {
      items: [0, 1, 2].map((i) => ({
        title: `Weak TLS cipher #${i}`,
        severity: 'LOW',
        description: 'TLS 1.0',
      })),
    },
  });
  expect(res.statusCode).toBe(202);
  batchId = (res.json() as { batchId: string }).batchId;
});
afterAll(async () => {
  await t.close();
});

const get = (url: string, key = owner.key) =>
  t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
const notFound = problemDocument(404, 'not_found', 'Not found', 'No such batch.');

describe('GET /api/v1/triage/batch/:id', () => {
  it('pages the items with a cursor and ends with a null nextCursor', async () => {
    const first = await get(`/api/v1/triage/batch/${batchId}?limit=2`);
    expect(first.statusCode).toBe(200);
    const page1 = first.json() as { items: { index: number; status: string }[]; nextCursor: string | null };
    expect(page1).toMatchObject({
      batchId,
      status: 'queued',
      total: 3,
      completed: 0,
      failed: 0,
      finishedAt: null,
    });
    expect(page1.items).toEqual([
      { index: 0, status: 'queued' },
      { index: 1, status: 'queued' },
    ]);
    expect(page1.nextCursor).toEqual(expect.any(String));
    const page2 = (await get(`/api/v1/triage/batch/${batchId}?limit=2&cursor=${page1.nextCursor}`)).json();
    expect(page2).toMatchObject({ items: [{ index: 2, status: 'queued' }], nextCursor: null });
  });

  it('refuses a malformed cursor on a batch of the workspace with the cursor error', async () => {
    const res = await get(`/api/v1/triage/batch/${batchId}?cursor=not-a-cursor`);
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
  });

  it('is 404 for an unknown batch (whatever the cursor), a malformed id and another workspace', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const url of [
      `/api/v1/triage/batch/${unknown}`,
      `/api/v1/triage/batch/${unknown}?cursor=not-a-cursor`,
      '/api/v1/triage/batch/not-a-uuid',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual(notFound);
    }
    const other = await signUp(t.app, { plan: 'trial' });
    const res = await get(`/api/v1/triage/batch/${batchId}`, other.key);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(notFound);
  });
});
