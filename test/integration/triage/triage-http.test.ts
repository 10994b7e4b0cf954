import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, createKey, type TestApp } from '../../helpers/test-app.js';
import { importKev } from '../../../src/domain/enrichment/kev-import.js';
import { MAX_JSON_DEPTH } from '../../../src/lib/storable-text.js';

const KEV = path.resolve('test/fixtures/enrichment/known_exploited_vulnerabilities.json.gz');
let t: TestApp;
let owner: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  t = await startTestApp();
  await importKev(t.infra.pool, { file: KEV });
  owner = await signUp(t.app, { plan: 'trial' });
});
afterAll(async () => {
  await t.close();
  const logged = t.logs.join('\n');
  expect(logged).not.toContain(owner.key);
});

const triage = (payload: unknown, key = owner.key, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: '/api/v1/triage',
    headers: { 'x-api-key': key, ...headers },
    payload: payload as object,
  });

describe('POST /api/v1/triage with the local engine (no credentials)', () => {
  it('answers with exactly the fields of docs/triage.md#request-and-answer', async () => {
    const res = await triage({
      cveIds: ['CVE-2021-44228'],
      title: 'Log4Shell in billing-api',
      severity: 'CRITICAL',
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(
      [
        'confidenceScore',
        'model',
        'priority',
        'reasoning',
        'recommendedAction',
        'severityOverride',
        'triagedAt',
        'usage',
      ].sort(),
    );
    expect(body.priority).toMatch(/^(CRITICAL|HIGH)$/);
    expect(['PATCH_IMMEDIATELY', 'PATCH_SCHEDULED', 'MITIGATE']).toContain(body.recommendedAction);
    expect(typeof body.reasoning).toBe('string');
    expect(body.reasoning.length).toBeGreaterThan(20);
    expect(body.confidenceScore).toBeGreaterThanOrEqual(0);
    expect(body.confidenceScore).toBeLessThanOrEqual(1);
    expect(
      body.severityOverride === null ||
        ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'].includes(body.severityOverride),
    ).toBe(true);
    expect(body.model).toMatch(/^[a-z][a-z0-9-]*:[A-Za-z0-9._-]+$/);
    expect(body.model.startsWith('local:')).toBe(true);
    expect(body.triagedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Object.keys(body.usage).sort()).toEqual(['inputTokens', 'outputTokens']);
    expect(Number.isInteger(body.usage.inputTokens) && body.usage.inputTokens > 0).toBe(true);
    expect(Number.isInteger(body.usage.outputTokens) && body.usage.outputTokens > 0).toBe(true);
  });

  it('bills the call to the key: one AI call, tokens as answered, spend at the tier price', async () => {
    const key = await createKey(t.app, owner, ['triage:write', 'usage:read'], 'billing');
    const res = await triage(
      {
        cveIds: ['CVE-2021-44228'],
        title: 'Log4Shell',
        severity: 'CRITICAL',
        asset: { internetExposed: true },
      },
      key.key,
    );
    expect(res.statusCode).toBe(200);
    const { usage } = res.json();
    const ledger = await t.infra.pool.query(
      `SELECT sum(input_tokens)::int AS i, sum(output_tokens)::int AS o, count(*) FILTER (WHERE ai_call)::int AS calls FROM usage_ledger WHERE key_id = $1`,
      [key.id],
    );
    expect(ledger.rows[0]).toEqual({ i: usage.inputTokens, o: usage.outputTokens, calls: 1 });
    const u = await t.app.inject({ method: 'GET', url: '/api/v1/usage', headers: { 'x-api-key': key.key } });
    expect(u.json().key).toMatchObject({
      aiCalls: 1,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
    });
  });

  it('a KEV finding on an exposed asset is CRITICAL / PATCH_IMMEDIATELY whatever the engine says', async () => {
    const res = await triage({
      cveIds: ['CVE-2021-44228'],
      title: 'Log4Shell',
      severity: 'LOW',
      asset: {
        name: 'edge',
        type: 'APPLICATION',
        environment: 'PRODUCTION',
        criticality: 'HIGH',
        internetExposed: true,
      },
    });
    expect(res.json()).toMatchObject({ priority: 'CRITICAL', recommendedAction: 'PATCH_IMMEDIATELY' });
  });
});

describe('POST /api/v1/triage: bad input', () => {
  it('rejects a model field like any unknown field', async () => {
    const res = await triage({ cveIds: ['CVE-2021-44228'], title: 'x', severity: 'HIGH', model: 'gpt-5' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      code: 'invalid_request',
      errors: [{ path: '/model', message: expect.any(String) }],
    });
  });

  it('lists every bad field', async () => {
    const res = await triage({
      cveIds: ['CVE-21-1', 7],
      severity: 'URGENT',
      asset: { type: 'LAPTOP', internetExposed: 'yes' },
    });
    expect(res.statusCode).toBe(400);
    const paths = res.json().errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/title',
        '/severity',
        '/cveIds/0',
        '/cveIds/1',
        '/asset/type',
        '/asset/internetExposed',
      ]),
    );
  });

  it('answers a body nested 2,000 deep (4 KB) with 400 at the first level too deep, on both routes', async () => {
    const deep = `${'['.repeat(2000)}${']'.repeat(2000)}`;
    const cases = [
      {
        url: '/api/v1/triage',
        body: `{"title":"x","severity":"LOW","asset":{"name":${deep}}}`,
        at: ['/asset/name'],
      },
      // Two deep arrays would also send Ajv's uniqueItems into a recursive deep equality.
      {
        url: '/api/v1/triage',
        body: `{"title":"x","severity":"LOW","cveIds":[${deep},${deep}]}`,
        at: ['/cveIds/0', '/cveIds/1'],
      },
      { url: '/api/v1/triage/batch', body: `{"items":[${deep}]}`, at: ['/items/0'] },
    ];
    for (const c of cases) {
      const res = await t.app.inject({
        method: 'POST',
        url: c.url,
        headers: { 'x-api-key': owner.key, 'content-type': 'application/json' },
        payload: c.body,
      });
      expect(res.statusCode, c.body.slice(0, 60)).toBe(400);
      // Each path names the first container past the limit: MAX_JSON_DEPTH segments in all.
      expect(res.json()).toMatchObject({
        code: 'invalid_request',
        errors: c.at.map((at) => ({
          path: `${at}${'/0'.repeat(MAX_JSON_DEPTH - at.split('/').length + 1)}`,
          message: `must not be nested more than ${MAX_JSON_DEPTH} levels deep`,
        })),
      });
    }
  });

  it('needs CVEs or a description', async () => {
    const res = await triage({ cveIds: [], title: 'x', severity: 'HIGH' });
    expect(res.json().errors).toEqual([
      { path: '/cveIds', message: 'must contain at least one CVE id unless description is given' },
    ]);
  });

  it('413 over 64 KiB, 415 for a non-JSON body, 403 without triage:write, 401 without a key', async () => {
    const big = await triage({
      cveIds: ['CVE-2021-44228'],
      title: 'x',
      severity: 'HIGH',
      description: 'a'.repeat(70 * 1024),
    });
    expect(big.statusCode).toBe(413);
    expect(big.json().code).toBe('payload_too_large');
    const form = await t.app.inject({
      method: 'POST',
      url: '/api/v1/triage',
      headers: { 'x-api-key': owner.key, 'content-type': 'text/plain' },
      payload: 'hi',
    });
    expect(form.statusCode).toBe(415);
    const reader = await createKey(t.app, owner, ['usage:read']);
    expect(
      (await triage({ cveIds: ['CVE-2021-44228'], title: 'x', severity: 'HIGH' }, reader.key)).json().code,
    ).toBe('insufficient_scope');
    const none = await t.app.inject({ method: 'POST', url: '/api/v1/triage', payload: { title: 'x' } });
    expect(none.json().code).toBe('missing_api_key');
  });

  it('413 when the finding is more input tokens than the catalog max', async () => {
    // Within the 20,000-character field limit, but many tokens: digits and letters tokenise apart.
    const words = Array.from({ length: 4500 }, (_, i) => `q${i % 10}z`).join(' ');
    const res = await triage({
      cveIds: ['CVE-2021-44228'],
      title: 'x',
      severity: 'HIGH',
      description: words,
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().detail).toMatch(/at most 8192/);
  });
});
