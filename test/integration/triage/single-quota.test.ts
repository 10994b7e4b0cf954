import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { startOpenAiFake } from '../../helpers/fake-providers/openai-fake.js';
import { startAnthropicFake } from '../../helpers/fake-providers/anthropic-fake.js';
import { remoteTriageEnv, triageCounts } from '../../helpers/triage-setup.js';

/**
 * The monthly AI-call limit on single requests, on both accounting paths: with a provider
 * outside the process the call is reserved before the provider is paid; with in-process
 * providers only, it is taken in the statement that stores the answer. Either way exactly the
 * limit is answered, the rest get 429 `monthly_limit_exceeded`, and nothing past the limit is
 * stored or billed. (tight-plans.json, service limits: 10 AI calls a month, 8 requests a minute.)
 */
const opened: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const o of opened.reverse()) await o.close();
});

const finding = {
  title: 'Weak TLS cipher',
  severity: 'LOW',
  description: 'TLS 1.0 enabled on an internal host',
};

/** One `POST /api/v1/triage` of {@link finding} with `key`. */
function triage(t: TestApp, key: string) {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/triage',
    headers: { 'x-api-key': key },
    payload: finding,
  });
}

describe.each([
  { path: 'reserved before a remote provider is called', remote: true },
  { path: 'taken when the answer of the local engine is stored', remote: false },
])('monthly limit of single triage requests: $path', ({ remote }) => {
  it('answers exactly the limit under concurrency and stores nothing past it', async () => {
    const fake = remote ? await startOpenAiFake() : null;
    if (fake) opened.push(fake);
    const t = await startTestApp({
      env: {
        PLANS_FILE: 'test/fixtures/foundation/tight-plans.json',
        ...(fake ? remoteTriageEnv(fake) : {}),
      },
    });
    opened.push(t);
    const s = await signUp(t.app, { plan: 'trial' });
    const send = () => triage(t, s.key);

    const first = await Promise.all(Array.from({ length: 6 }, send));
    expect(first.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    t.clock.advance(61_000); // a new rate-limit window; the month is the same
    const second = await Promise.all(Array.from({ length: 8 }, send));
    expect(second.filter((r) => r.statusCode === 200)).toHaveLength(4);
    const refused = second.filter((r) => r.statusCode === 429);
    expect(refused).toHaveLength(4);
    for (const r of refused) expect(r.json()).toMatchObject({ code: 'monthly_limit_exceeded', status: 429 });

    expect(await triageCounts(t, s.workspaceId)).toEqual({
      results: 10,
      calls: 10,
      used: 10,
      reserved: 0,
      reservations: 0,
    });
    if (fake) expect(fake.requests.length).toBe(10); // no provider call was paid for past the limit
    expect(second.find((r) => r.statusCode === 200)!.json().model).toMatch(remote ? /^openai:/ : /^local:/);
  });
});

describe('a provider answer with text PostgreSQL cannot store', () => {
  it('is cleaned by the policy and stored, not turned into a failed request', async () => {
    const fake = await startOpenAiFake([
      { kind: 'success', answer: { reasoning: 'Exploited\u0000 in the wild \ud800.' } },
    ]);
    opened.push(fake);
    const t = await startTestApp({ env: remoteTriageEnv(fake) });
    opened.push(t);
    const s = await signUp(t.app, { plan: 'trial' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/triage',
      headers: { 'x-api-key': s.key },
      payload: finding,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().reasoning).toBe('Exploited in the wild \uFFFD. [policy:STORABLE_TEXT]');
    // The trial's 50,000 calls a month are leased 25 at a time; the unused 24 go back on close.
    expect(await triageCounts(t, s.workspaceId)).toEqual({
      results: 1,
      calls: 1,
      used: 1,
      reserved: 24,
      reservations: 1,
    });
    await t.deps.triage.close();
    expect(await triageCounts(t, s.workspaceId)).toEqual({
      results: 1,
      calls: 1,
      used: 1,
      reserved: 0,
      reservations: 0,
    });
  });
});

describe('a remote request that gets no answer', () => {
  it('is 503 triage_unavailable, stores no result, bills nothing, and its AI call goes back', async () => {
    const openai = await startOpenAiFake([{ kind: 'auth' }]);
    const anthropic = await startAnthropicFake([{ kind: 'server_error' }]);
    opened.push(openai, anthropic);
    const t = await startTestApp({
      env: remoteTriageEnv(openai, anthropic),
    });
    opened.push(t);
    const s = await signUp(t.app, { plan: 'trial' });
    // No CVE, so no enrichment the policy could answer from: every tier fails, nothing is served.
    const send = () => triage(t, s.key);
    for (const res of await Promise.all([send(), send(), send()])) {
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toMatchObject({ code: 'triage_unavailable', status: 503 });
      expect(res.body).not.toContain('sk-');
    }
    expect(openai.requests.length).toBeGreaterThanOrEqual(6); // both OpenAI tiers, three requests
    expect(anthropic.requests.length).toBeGreaterThanOrEqual(3);
    // One lease of 25 was reserved; the three calls went back to it, none was used.
    expect(await triageCounts(t, s.workspaceId)).toEqual({
      results: 0,
      calls: 0,
      used: 0,
      reserved: 25,
      reservations: 1,
    });
    await t.deps.triage.close();
    expect(await triageCounts(t, s.workspaceId)).toEqual({
      results: 0,
      calls: 0,
      used: 0,
      reserved: 0,
      reservations: 0,
    });
    const ledger = await t.infra.pool.query(
      `SELECT count(*)::int AS n FROM usage_ledger WHERE workspace_id = $1`,
      [s.workspaceId],
    );
    expect(ledger.rows[0].n).toBe(0);
  });
});
