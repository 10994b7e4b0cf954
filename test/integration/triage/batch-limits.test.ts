import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, createKey, type TestApp } from '../../helpers/test-app.js';
import { problemDocument } from '../../helpers/problem.js';
import { triageCounts } from '../../helpers/triage-setup.js';
import { TRIAGE_QUEUE } from '../../../src/jobs/triage-batch.js';

/**
 * Body limits of the triage routes (docs/api.md#errors): 5 MiB for a batch, 64 KiB for a single
 * request. A body past the limit is 413 `payload_too_large` before anything is stored, reserved
 * or enqueued; a body at the limit is read (and here judged on its content). The API key is
 * checked before the body is read, so nobody unauthenticated gets 5 MiB parsed.
 */
const KiB = 1024;
const MiB = 1024 * KiB;
let t: TestApp;
let owner: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  t = await startTestApp();
  owner = await signUp(t.app, { plan: 'trial' }); // service limits: 1,000 items a batch
});
afterAll(async () => {
  await t.close();
});

const finding = (i: number) => ({
  title: `Weak TLS cipher #${i}`,
  severity: 'LOW',
  description: 'TLS 1.0 enabled on an internal host',
});

/** `value` as JSON padded with trailing spaces (still valid JSON) to exactly `bytes` bytes. */
function jsonOfSize(value: unknown, bytes: number): string {
  const json = JSON.stringify(value);
  const pad = bytes - Buffer.byteLength(json);
  if (pad < 0) throw new Error(`the JSON is already ${Buffer.byteLength(json)} bytes`);
  return json + ' '.repeat(pad);
}

function post(url: string, body: string | Readable, key: string | null = owner.key) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
    payload: body,
  });
}

const tooLarge = problemDocument(
  413,
  'payload_too_large',
  'Payload too large',
  'The request body is larger than this route accepts.',
);

/** Nothing of the workspace stored, reserved, billed or enqueued. */
async function expectNothingKept(): Promise<void> {
  const batches = await t.infra.pool.query(
    `SELECT count(*)::int AS n FROM triage_batches WHERE workspace_id = $1`,
    [owner.workspaceId],
  );
  expect(batches.rows[0].n).toBe(0);
  expect(await triageCounts(t, owner.workspaceId)).toEqual({
    results: 0,
    calls: 0,
    used: 0,
    reserved: 0,
    reservations: 0,
  });
  const jobs = await t.infra.queues
    .queue(TRIAGE_QUEUE)
    .getJobCounts('waiting', 'delayed', 'active', 'completed', 'failed');
  expect(Object.values(jobs).reduce((a, b) => a + b, 0)).toBe(0);
}

describe('POST /api/v1/triage/batch body limit (5 MiB)', () => {
  it('refuses a body one byte over 5 MiB with 413, storing, reserving and enqueuing nothing', async () => {
    const res = await post('/api/v1/triage/batch', jsonOfSize({ items: [finding(0)] }, 5 * MiB + 1));
    expect(res.statusCode).toBe(413);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toEqual(tooLarge);
    await expectNothingKept();
  });

  it('refuses an over-limit body sent without Content-Length (chunked) the same way', async () => {
    const body = jsonOfSize({ items: [finding(0)] }, 5 * MiB + 64 * KiB);
    const chunks = Array.from({ length: Math.ceil(body.length / (64 * KiB)) }, (_, i) =>
      body.slice(i * 64 * KiB, (i + 1) * 64 * KiB),
    );
    const res = await post('/api/v1/triage/batch', Readable.from(chunks));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual(tooLarge);
    await expectNothingKept();
  });

  it('reads a body of exactly 5 MiB (past the 1 MiB server default) and judges its content', async () => {
    const items = Array.from({ length: 1001 }, (_, i) => finding(i));
    const res = await post('/api/v1/triage/batch', jsonOfSize({ items }, 5 * MiB));
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([{ path: '/items', message: 'must NOT have more than 1000 items' }]);
    await expectNothingKept();
  });

  it('checks the key before reading an over-limit body: 401 without one, 403 without triage:write', async () => {
    const body = jsonOfSize({ items: [finding(0)] }, 6 * MiB);
    const anonymous = await post('/api/v1/triage/batch', body, null);
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual(
      problemDocument(
        401,
        'missing_api_key',
        'Missing API key',
        'This route needs an API key in the X-API-Key header.',
      ),
    );
    const reader = await createKey(t.app, owner, ['scans:read']);
    const unscoped = await post('/api/v1/triage/batch', body, reader.key);
    expect(unscoped.statusCode).toBe(403);
    expect(unscoped.json()).toEqual(
      problemDocument(
        403,
        'insufficient_scope',
        'Insufficient scope',
        'This route needs a key with the triage:write scope.',
      ),
    );
    await expectNothingKept();
  });
});

describe('POST /api/v1/triage body limit (64 KiB)', () => {
  it('refuses a body one byte over 64 KiB with 413 and bills nothing; answers one of exactly 64 KiB', async () => {
    const over = await post('/api/v1/triage', jsonOfSize(finding(0), 64 * KiB + 1));
    expect(over.statusCode).toBe(413);
    expect(over.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(over.json()).toEqual(tooLarge);
    await expectNothingKept();

    const at = await post('/api/v1/triage', jsonOfSize(finding(0), 64 * KiB));
    expect(at.statusCode, at.body).toBe(200);
    expect(await triageCounts(t, owner.workspaceId)).toMatchObject({ results: 1, calls: 1, used: 1 });
  });
});
