import { describe, expect, it } from 'vitest';
import { postJson, redact, retryAfterMs } from '../../../src/domain/triage-engine/providers/http-client.js';

describe('retryAfterMs', () => {
  const now = Date.parse('2026-11-21T12:00:00Z');
  it.each([
    { headers: { 'retry-after-ms': '250' }, expected: 250 },
    { headers: { 'retry-after-ms': '250', 'retry-after': '9' }, expected: 250 },
    { headers: { 'retry-after': '2' }, expected: 2000 },
    { headers: { 'retry-after': '0' }, expected: 0 },
    { headers: { 'retry-after': 'Sat, 21 Nov 2026 12:00:05 GMT' }, expected: 5000 },
    { headers: { 'retry-after': 'Sat, 21 Nov 2026 11:59:00 GMT' }, expected: 0 },
    { headers: { 'retry-after': 'soon' }, expected: undefined },
    { headers: {}, expected: undefined },
  ])('$headers → $expected', ({ headers, expected }) => {
    expect(retryAfterMs(new Headers(headers as Record<string, string>), now)).toBe(expected);
  });
});

describe('redact', () => {
  it.each([
    { text: 'bad key sk-live-abc', secrets: ['sk-live-abc'], expected: 'bad key [redacted]' },
    {
      text: 'Incorrect API key provided: sk-proj-AAAAAAAAAAAA.',
      secrets: [],
      expected: 'Incorrect API key provided: [redacted].',
    },
    { text: 'x'.repeat(400), secrets: [], expected: 'x'.repeat(300) },
  ])('$text', ({ text, secrets, expected }) => {
    expect(redact(text, secrets)).toBe(expected);
  });
});

function fakeFetch(responses: (() => Response)[]): { fetchImpl: typeof fetch; calls: number } {
  const state = {
    calls: 0,
    fetchImpl: (() =>
      Promise.resolve(
        responses[Math.min(state.calls++, responses.length - 1)]!(),
      )) as unknown as typeof fetch,
  };
  return state;
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  () =>
    new Response(JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json', ...headers },
    });

describe('postJson classification and retries', () => {
  const base = {
    url: 'http://fake.invalid/x',
    headers: {},
    body: {},
    timeoutMs: 1000,
    secrets: [],
    backoffBaseMs: 1,
    backoffMaxMs: 2,
  };
  it.each([
    { status: 408, kind: 'timeout', retried: true },
    { status: 409, kind: 'unavailable', retried: true },
    { status: 429, kind: 'rate_limited', retried: true },
    { status: 500, kind: 'unavailable', retried: true },
    { status: 502, kind: 'unavailable', retried: true },
    { status: 529, kind: 'unavailable', retried: true },
    { status: 400, kind: 'bad_response', retried: false },
    { status: 401, kind: 'auth', retried: false },
    { status: 403, kind: 'auth', retried: false },
    { status: 404, kind: 'bad_response', retried: false },
  ])('HTTP $status → $kind (retried: $retried)', async ({ status, kind, retried }) => {
    const f = fakeFetch([json(status, { error: { message: 'nope', type: 'x', code: null } })]);
    const result = await postJson({ ...base, maxRetries: 2, fetchImpl: f.fetchImpl });
    expect(result).toMatchObject({ ok: false, status, error: { kind, retryable: retried } });
    expect(f.calls).toBe(retried ? 3 : 1);
    expect(result.attempts).toBe(f.calls);
  });

  it('does not retry a 429 whose code is insufficient_quota', async () => {
    const f = fakeFetch([
      json(429, { error: { message: 'quota', type: 'insufficient_quota', code: 'insufficient_quota' } }),
    ]);
    const result = await postJson({ ...base, maxRetries: 3, fetchImpl: f.fetchImpl });
    expect(result).toMatchObject({ ok: false, error: { kind: 'insufficient_quota', retryable: false } });
    expect(f.calls).toBe(1);
  });

  it('returns the JSON of a success after transient failures', async () => {
    const f = fakeFetch([json(503, {}), json(200, { hello: 'world' })]);
    const result = await postJson({ ...base, maxRetries: 1, fetchImpl: f.fetchImpl });
    expect(result).toMatchObject({ ok: true, status: 200, json: { hello: 'world' }, attempts: 2 });
  });

  it('reports a fetch failure without leaking what the error said', async () => {
    const fetchImpl = (() =>
      Promise.reject(new Error('getaddrinfo ENOTFOUND sk-secret-in-url'))) as unknown as typeof fetch;
    const result = await postJson({ ...base, maxRetries: 0, fetchImpl });
    expect(result).toEqual({
      ok: false,
      attempts: 1,
      error: { kind: 'unavailable', retryable: true, message: 'connection failed' },
    });
  });

  it('stops retrying once the caller aborts', async () => {
    const controller = new AbortController();
    const f = fakeFetch([
      () => {
        controller.abort();
        return json(500, {})();
      },
    ]);
    const result = await postJson({
      ...base,
      maxRetries: 5,
      fetchImpl: f.fetchImpl,
      signal: controller.signal,
    });
    expect(f.calls).toBe(1);
    expect(result.ok).toBe(false);
  });
});
