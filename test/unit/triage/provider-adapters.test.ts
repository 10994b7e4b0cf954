import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from '../../../src/domain/triage-engine/providers/anthropic.js';
import {
  createOpenAiCompatibleProvider,
  type RemoteProviderOptions,
} from '../../../src/domain/triage-engine/providers/openai-compatible.js';
import type { Provider, ProviderInput } from '../../../src/domain/triage-engine/types.js';
import { startAnthropicFake } from '../../helpers/fake-providers/anthropic-fake.js';
import { DEFAULT_ANSWER, type FakeServer, type FakeStep } from '../../helpers/fake-providers/fake-server.js';
import { startOpenAiFake } from '../../helpers/fake-providers/openai-fake.js';
import { enrichment, enrichmentMap } from './enrichment-fixtures.js';
import { buildPrompt } from '../../../src/domain/triage-engine/prompt.js';

const API_KEY = 'sk-test-0123456789abcdefSECRET';
const request: ProviderInput['request'] = {
  cveIds: ['CVE-2021-44228'],
  title: 'Log4Shell',
  severity: 'CRITICAL',
  asset: { criticality: 'HIGH', internetExposed: true },
};
const enriched = enrichmentMap(enrichment('CVE-2021-44228', { kev: true, epss: 0.944, cvssScore: 10 }));
const input: ProviderInput = {
  request,
  enrichment: enriched,
  prompt: buildPrompt(request, enriched),
  model: 'test-model',
};

interface Variant {
  name: string;
  start: (steps?: FakeStep[]) => Promise<FakeServer>;
  create: (o: RemoteProviderOptions) => Provider;
  overloadedStatus: number;
  successUsage: { inputTokens: number; outputTokens: number };
  assertWire: (server: FakeServer) => void;
}

const variants: Variant[] = [
  {
    name: 'openai-compatible',
    start: startOpenAiFake,
    create: createOpenAiCompatibleProvider,
    overloadedStatus: 503,
    successUsage: { inputTokens: 812, outputTokens: 64 },
    assertWire(server) {
      const req = server.requests[0]!;
      expect(req.method).toBe('POST');
      expect(req.path).toBe('/v1/chat/completions');
      expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(req.body).toMatchObject({
        model: 'test-model',
        messages: [{ role: 'system' }, { role: 'user' }],
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'record_triage',
            strict: true,
            schema: { type: 'object', additionalProperties: false },
          },
        },
      });
    },
  },
  {
    name: 'anthropic',
    start: startAnthropicFake,
    create: createAnthropicProvider,
    overloadedStatus: 529,
    successUsage: { inputTokens: 1034, outputTokens: 118 },
    assertWire(server) {
      const req = server.requests[0]!;
      expect(req.path).toBe('/v1/messages');
      expect(req.headers['x-api-key']).toBe(API_KEY);
      expect(req.headers['anthropic-version']).toBe('2023-06-01');
      expect(req.headers.authorization).toBeUndefined();
      expect(req.body).toMatchObject({
        model: 'test-model',
        tools: [{ name: 'record_triage', input_schema: { type: 'object' } }],
        tool_choice: { type: 'tool', name: 'record_triage' },
      });
    },
  },
];

describe.each(variants)('$name adapter against a fake server', (v) => {
  let server: FakeServer;
  const make = (over: Partial<RemoteProviderOptions> = {}) =>
    v.create({
      name: v.name,
      baseUrl: v.name === 'anthropic' ? server.url : `${server.url}/v1`,
      apiKey: API_KEY,
      timeoutMs: 2000,
      maxRetries: 2,
      maxOutputTokens: 400,
      http: { backoffBaseMs: 5, backoffMaxMs: 20 },
      ...over,
    });
  beforeAll(async () => {
    server = await v.start();
  });
  afterAll(() => server.close());
  const run = async (steps: FakeStep[], over?: Partial<RemoteProviderOptions>) => {
    server.script(steps);
    server.requests.length = 0;
    return make(over).triage(input);
  };

  it('parses a successful answer and its usage, sending the real wire format', async () => {
    const result = await run([{ kind: 'success' }]);
    expect(result).toMatchObject({ ok: true, answer: DEFAULT_ANSWER, usage: v.successUsage });
    v.assertWire(server);
  });

  it('retries a 429 after the retry-after-ms it was given', async () => {
    const result = await run([{ kind: 'rate_limited', retryAfterMs: 150 }, { kind: 'success' }]);
    expect(result.ok).toBe(true);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(140);
  });

  it('weighs every attempt against the provider limiter, retries included, not the waits', async () => {
    const scheduled: number[] = [];
    let inside = 0;
    const limiter = {
      async schedule<T>(tokens: number, fn: () => Promise<T>): Promise<T> {
        scheduled.push(tokens);
        inside += 1;
        try {
          return await fn();
        } finally {
          inside -= 1;
        }
      },
      close: () => Promise.resolve(),
    };
    const result = await run(
      [{ kind: 'server_error' }, { kind: 'rate_limited', retryAfterMs: 50 }, { kind: 'success' }],
      {
        limiter,
      },
    );
    expect(result.ok).toBe(true);
    expect(server.requests).toHaveLength(3);
    expect(scheduled).toHaveLength(3); // one limiter slot per HTTP attempt
    expect(new Set(scheduled).size).toBe(1); // each weighed by the prompt plus the answer budget
    expect(scheduled[0]).toBeGreaterThan(400);
    expect(inside).toBe(0);
  });

  it('retries a 429 after retry-after in seconds', async () => {
    const result = await run([{ kind: 'rate_limited', retryAfterSeconds: 1 }, { kind: 'success' }]);
    expect(result.ok).toBe(true);
    expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('gives up at once when retry-after is longer than it will wait, reporting the wait', async () => {
    const result = await run([{ kind: 'rate_limited', retryAfterSeconds: 120 }, { kind: 'success' }]);
    expect(result).toMatchObject({
      ok: false,
      error: { kind: 'rate_limited', retryable: true, retryAfterMs: 120_000 },
    });
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    { step: { kind: 'server_error' } as FakeStep, label: '500' },
    { step: { kind: 'overloaded' } as FakeStep, label: 'overloaded' },
  ])('retries a $label and then succeeds', async ({ step }) => {
    const result = await run([step, { kind: 'success' }]);
    expect(result.ok).toBe(true);
    expect(server.requests).toHaveLength(2);
  });

  it('stops after maxRetries with a retryable unavailable error', async () => {
    const result = await run([{ kind: 'overloaded' }]);
    expect(result).toMatchObject({ ok: false, error: { kind: 'unavailable', retryable: true } });
    expect(result.ok === false && result.error.message).toContain(`HTTP ${v.overloadedStatus}`);
    expect(server.requests).toHaveLength(3);
  });

  it('does not retry an exhausted quota', async () => {
    const result = await run([{ kind: 'insufficient_quota' }, { kind: 'success' }]);
    expect(result).toMatchObject({ ok: false, error: { kind: 'insufficient_quota', retryable: false } });
    expect(server.requests).toHaveLength(1);
  });

  it('reports a malformed JSON body as bad_response without retrying', async () => {
    const result = await run([{ kind: 'malformed_json' }, { kind: 'success' }]);
    expect(result).toMatchObject({ ok: false, error: { kind: 'bad_response', retryable: false } });
    expect(server.requests).toHaveLength(1);
  });

  it('reports schema-violating content as schema_violation, with the tokens spent', async () => {
    const result = await run([{ kind: 'schema_violation' }]);
    expect(result).toMatchObject({
      ok: false,
      error: { kind: 'schema_violation' },
      usage: { inputTokens: expect.any(Number) },
    });
  });

  it('times out a slow response', async () => {
    const result = await run([{ kind: 'slow', delayMs: 1000, then: { kind: 'success' } }], {
      timeoutMs: 100,
      maxRetries: 0,
    });
    expect(result).toMatchObject({ ok: false, error: { kind: 'timeout', retryable: true } });
  });

  it('returns a slow answer that arrives within the timeout', async () => {
    const result = await run([{ kind: 'slow', delayMs: 50, then: { kind: 'success' } }]);
    expect(result.ok).toBe(true);
  });

  it('never puts the API key in an error, even when the provider echoes it', async () => {
    const result = await run([{ kind: 'auth' }]);
    expect(result).toMatchObject({ ok: false, error: { kind: 'auth', retryable: false } });
    expect(JSON.stringify(result)).not.toContain(API_KEY);
    expect(JSON.stringify(result)).not.toContain('0123456789abcdef');
  });

  it('reports an unreachable server as unavailable', async () => {
    const provider = v.create({
      name: v.name,
      baseUrl: 'http://127.0.0.1:1',
      apiKey: API_KEY,
      timeoutMs: 500,
      maxRetries: 0,
      maxOutputTokens: 100,
    });
    const result = await provider.triage(input);
    expect(result).toMatchObject({ ok: false, error: { kind: 'unavailable', message: 'connection failed' } });
  });
});
