import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPrompt } from '../../../src/domain/triage-engine/prompt.js';
import { buildProviders } from '../../../src/domain/triage-engine/providers/build-providers.js';
import { createOpenAiCompatibleProvider } from '../../../src/domain/triage-engine/providers/openai-compatible.js';
import { DEFAULT_TRIAGE_CONFIG, parseTriageConfig } from '../../../src/domain/triage-engine/triage-config.js';
import type { ProviderInput } from '../../../src/domain/triage-engine/types.js';
import type { FakeServer } from '../../helpers/fake-providers/fake-server.js';
import { startOpenAiFake } from '../../helpers/fake-providers/openai-fake.js';
import { enrichment, enrichmentMap } from './enrichment-fixtures.js';

/**
 * Reasoning-class models (o-series, GPT-5) refuse `max_tokens` and any non-default temperature
 * with a 400; the token-limit parameter and the sampling come from config/triage.json per
 * provider and per model. The fake answers as the real API does.
 */
const request: ProviderInput['request'] = {
  cveIds: ['CVE-2021-44228'],
  title: 'Log4Shell',
  severity: 'HIGH',
};
const enriched = enrichmentMap(enrichment('CVE-2021-44228', { kev: true, epss: 0.9, cvssScore: 10 }));
const input = (model: string): ProviderInput => ({
  request,
  enrichment: enriched,
  prompt: buildPrompt(request, enriched),
  model,
});

let fake: FakeServer;
beforeAll(async () => {
  fake = await startOpenAiFake();
});
afterAll(() => fake.close());

const openai = (requestSettings?: Parameters<typeof createOpenAiCompatibleProvider>[0]['requestSettings']) =>
  createOpenAiCompatibleProvider({
    name: 'openai',
    baseUrl: `${fake.url}/v1`,
    apiKey: 'sk-test',
    timeoutMs: 2000,
    maxRetries: 0,
    maxOutputTokens: 800,
    ...(requestSettings ? { requestSettings } : {}),
  });

describe('request parameters per model', () => {
  it('a reasoning model sent max_tokens is refused as the real API refuses it', async () => {
    fake.requests.length = 0;
    const result = await openai().triage(input('o4-mini'));
    expect(result).toMatchObject({ ok: false, error: { kind: 'bad_response', retryable: false } });
    expect(fake.requests[0]!.body).toMatchObject({ max_tokens: 800, temperature: 0 });
    const res = await fetch(`${fake.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'o4-mini', max_tokens: 10, messages: [] }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: {
        message:
          "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        type: 'invalid_request_error',
        param: 'max_tokens',
        code: 'unsupported_parameter',
      },
    });
  });

  it('the shipped config sends max_completion_tokens and no temperature to reasoning models, max_tokens and temperature 0 to others', async () => {
    const built = buildProviders(
      DEFAULT_TRIAGE_CONFIG,
      { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${fake.url}/v1` },
      { http: { backoffBaseMs: 1 } },
    );
    try {
      for (const model of ['o4-mini', 'gpt-5-mini']) {
        fake.requests.length = 0;
        expect(await built.providers.openai!.triage(input(model))).toMatchObject({ ok: true });
        const body = fake.requests[0]!.body as Record<string, unknown>;
        expect(body.max_completion_tokens).toBe(800);
        expect(body).not.toHaveProperty('max_tokens');
        expect(body).not.toHaveProperty('temperature');
      }
      fake.requests.length = 0;
      expect(await built.providers.openai!.triage(input('gpt-4.1-mini'))).toMatchObject({ ok: true });
      expect(fake.requests[0]!.body).toMatchObject({ max_tokens: 800, temperature: 0 });
      expect(fake.requests[0]!.body).not.toHaveProperty('max_completion_tokens');
    } finally {
      await built.close();
    }
  });

  it('a provider default applies to every model without an override', async () => {
    fake.requests.length = 0;
    const provider = openai({
      tokenLimitParameter: 'max_completion_tokens',
      sampling: { top_p: 1 },
      models: {},
    });
    expect(await provider.triage(input('o3'))).toMatchObject({ ok: true });
    expect(fake.requests[0]!.body).toMatchObject({ max_completion_tokens: 800, top_p: 1 });
  });

  it('config refuses an unknown parameter name, sampling parameter or value, and max_completion_tokens for anthropic', () => {
    const withOpenAi = (extra: Record<string, unknown>, kind = 'openai-compatible') => ({
      ...DEFAULT_TRIAGE_CONFIG,
      providers: { openai: { ...DEFAULT_TRIAGE_CONFIG.providers.openai, kind, ...extra } },
      chain: [{ tier: 'routine', provider: 'openai', model: 'm', billedAs: 'svc-triage-routine' }],
    });
    expect(() => parseTriageConfig(withOpenAi({ tokenLimitParameter: 'max_output_tokens' }))).toThrow(
      'config/triage.json: providers.openai.tokenLimitParameter must be one of max_tokens, max_completion_tokens',
    );
    expect(() => parseTriageConfig(withOpenAi({ sampling: { seed: 1 } }))).toThrow(
      'config/triage.json: providers.openai.sampling.seed is not one of temperature, top_p',
    );
    expect(() => parseTriageConfig(withOpenAi({ models: { o3: { sampling: { temperature: 3 } } } }))).toThrow(
      'config/triage.json: providers.openai.models.o3.sampling.temperature must be a number in [0, 2]',
    );
    expect(() =>
      parseTriageConfig(withOpenAi({ tokenLimitParameter: 'max_completion_tokens' }, 'anthropic')),
    ).toThrow('config/triage.json: providers.openai.tokenLimitParameter must be max_tokens for anthropic');
    expect(DEFAULT_TRIAGE_CONFIG.providers.openai!.requestSettings.models['o4-mini']).toEqual({
      tokenLimitParameter: 'max_completion_tokens',
      sampling: {},
    });
  });
});
