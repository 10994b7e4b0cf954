import { afterAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { startOpenAiFake } from '../../helpers/fake-providers/openai-fake.js';
import { problemDocument } from '../../helpers/problem.js';
import {
  plansEnv,
  pollBatch,
  remoteTriageEnv,
  startTriageTestWorker,
  triageCounts,
} from '../../helpers/triage-setup.js';

/**
 * The monthly AI-call limit when single requests and batches race for the last calls of a month
 * (docs/api.md#plans-and-quotas, docs/triage.md#billing). Singles take their call when the answer is stored (local engine) or hold it
 * from a lease before the provider is paid (remote provider); batches reserve every item's call
 * at acceptance and are refused whole when they do not fit. Whatever the interleaving, no more
 * than the limit is answered, every refusal is the same 429 problem (a batch's says how many calls
 * were left and how many it asked), and once the batches have
 * finished and the leases are closed nothing stays reserved.
 */
const LIMIT = 40;
const BATCHES = 10;
const BATCH_SIZE = 5;
// Batches alone ask 50 calls and singles alone 45: both kinds must meet refusals.
const SINGLES = 45;

const opened: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const o of opened.reverse()) await o.close();
});

const finding = (i: number) => ({
  title: `Weak TLS cipher #${i}`,
  severity: 'LOW',
  description: 'TLS 1.0 enabled on an internal host',
});

const refusal = problemDocument(
  429,
  'monthly_limit_exceeded',
  'Monthly AI-call limit exceeded',
  `This workspace has used its ${LIMIT} AI calls for this month.`,
);
// A batch is refused when it asks more than is left: fewer than its size, maybe none.
const batchRefusal = {
  ...refusal,
  detail: expect.stringMatching(
    new RegExp(
      `^This workspace has [0-${BATCH_SIZE - 1}] of its ${LIMIT} AI calls left for this month; the batch asks for ${BATCH_SIZE}\\.$`,
    ),
  ),
};

function expectRefusal(res: LightMyRequestResponse, batch: boolean): void {
  expect(res.json()).toEqual(batch ? batchRefusal : refusal);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  // RateLimit-* describe the key's request rate, never the monthly limit (docs/api.md#plans-and-quotas).
  expect(Number(res.headers['ratelimit-remaining'])).toBeGreaterThan(0);
}

describe.each([
  { path: 'local engine: singles take their call when the answer is stored', remote: false },
  { path: 'remote provider: singles hold their call from a lease', remote: true },
])('singles and batches racing for the monthly limit ($path)', ({ remote }) => {
  it('answers at most the limit, refuses the rest with 429 (batches whole), and leaks no reservation', async () => {
    const fake = remote ? await startOpenAiFake() : null;
    if (fake) opened.push(fake);
    const t: TestApp = await startTestApp({
      env: {
        ...plansEnv({ aiCallsPerMonth: LIMIT, requestsPerMinute: 10_000, batchMaxItems: 10 }),
        ...(fake ? remoteTriageEnv(fake) : {}),
      },
    });
    opened.push(t);
    opened.push(startTriageTestWorker(t));
    const s = await signUp(t.app, { plan: 'trial' });
    const post = (url: string, payload: object) =>
      t.app.inject({ method: 'POST', url, headers: { 'x-api-key': s.key }, payload });

    // Interleaved: two requests in eleven are batches, so batches and singles are in flight together.
    const asks = Array.from({ length: BATCHES + SINGLES }, (_, i) =>
      i % 11 === 0 || i % 11 === 6
        ? {
            batch: true,
            res: post('/api/v1/triage/batch', {
              items: Array.from({ length: BATCH_SIZE }, (_, j) => finding(j)),
            }),
          }
        : { batch: false, res: post('/api/v1/triage', finding(i)) },
    );
    const settled = await Promise.all(asks.map(async (a) => ({ batch: a.batch, res: await a.res })));
    const singles = settled.filter((a) => !a.batch).map((a) => a.res);
    const batches = settled.filter((a) => a.batch).map((a) => a.res);
    expect(batches).toHaveLength(BATCHES);
    expect(singles).toHaveLength(SINGLES);

    for (const res of singles) expect([200, 429], res.body).toContain(res.statusCode);
    for (const res of batches) expect([202, 429], res.body).toContain(res.statusCode);
    for (const res of singles.filter((r) => r.statusCode === 429)) expectRefusal(res, false);
    for (const res of batches.filter((r) => r.statusCode === 429)) expectRefusal(res, true);
    const answered = singles.filter((r) => r.statusCode === 200);
    const accepted = batches.filter((r) => r.statusCode === 202);
    if (remote) for (const r of answered) expect(r.json().model).toMatch(/^openai:/);

    // Every accepted batch is answered in full: it was reserved whole, never in part.
    for (const res of accepted) {
      const done = await pollBatch(t, s.key, res.json().batchId, 60_000);
      expect(done).toMatchObject({
        status: 'completed',
        total: BATCH_SIZE,
        completed: BATCH_SIZE,
        failed: 0,
      });
    }
    const stored = await t.infra.pool.query(
      `SELECT count(*)::int AS n FROM triage_batches WHERE workspace_id = $1`,
      [s.workspaceId],
    );
    expect(stored.rows[0].n).toBe(accepted.length); // a refused batch stored nothing

    await t.deps.triage.close(); // the calls leased but not handed out go back
    const used = answered.length + accepted.length * BATCH_SIZE;
    expect(used).toBeLessThanOrEqual(LIMIT);
    expect(await triageCounts(t, s.workspaceId)).toEqual({
      results: used,
      calls: used,
      used,
      reserved: 0,
      reservations: 0,
    });
    // A refusal only when there was no room: a single was refused, so the month is spent.
    expect(answered.length).toBeLessThan(SINGLES);
    expect(accepted.length).toBeLessThan(BATCHES);
    expect(used).toBe(LIMIT);
    if (fake) expect(fake.requests.length).toBe(used); // no provider call paid for past the limit

    const usage = await t.app.inject({
      method: 'GET',
      url: '/api/v1/usage',
      headers: { 'x-api-key': s.key },
    });
    expect(usage.json().workspace).toMatchObject({
      aiCalls: used,
      aiCallLimit: LIMIT,
      aiCallsThisMonth: used,
      aiCallsRemaining: LIMIT - used,
    });
  }, 60_000);
});
