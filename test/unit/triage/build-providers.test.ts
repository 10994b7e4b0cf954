import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProviders } from '../../../src/domain/triage-engine/providers/build-providers.js';
import { routeTriage } from '../../../src/domain/triage-engine/router.js';
import { DEFAULT_TRIAGE_CONFIG, parseTriageConfig } from '../../../src/domain/triage-engine/triage-config.js';
import { startAnthropicFake } from '../../helpers/fake-providers/anthropic-fake.js';
import type { FakeServer } from '../../helpers/fake-providers/fake-server.js';
import { startOpenAiFake } from '../../helpers/fake-providers/openai-fake.js';
import { enrichment, enrichmentMap } from './enrichment-fixtures.js';

describe('config/triage.json', () => {
  it('ships the chain, thresholds and billing of docs/triage.md#routing and docs/triage.md#model-catalog', () => {
    expect(DEFAULT_TRIAGE_CONFIG.thresholds).toEqual({ confidence: 0.7, epss: 0.1, cvss: 9 });
    expect(DEFAULT_TRIAGE_CONFIG.chain.map((t) => [t.tier, t.billedAs])).toEqual([
      ['routine', 'svc-triage-routine'],
      ['escalated-1', 'svc-triage-v1'],
      ['escalated-2', 'svc-triage-v1'],
    ]);
  });

  it.each([
    {
      patch: { thresholds: { confidence: 1.5, epss: 0.1, cvss: 9 } },
      message: 'thresholds.confidence must be a number in [0, 1]',
    },
    { patch: { chain: [] }, message: 'chain must list at least one tier' },
    {
      patch: { chain: [{ tier: 'routine', provider: 'nobody', model: 'm', billedAs: 'svc-triage-routine' }] },
      message: 'chain[0].provider names unknown provider nobody',
    },
  ])('refuses a bad config: $message', ({ patch, message }) => {
    expect(() => parseTriageConfig({ ...DEFAULT_TRIAGE_CONFIG, ...patch })).toThrow(
      `config/triage.json: ${message}`,
    );
  });
});

describe('buildProviders', () => {
  it('serves every tier with local when no credentials are configured', async () => {
    const built = buildProviders(DEFAULT_TRIAGE_CONFIG, {});
    expect(Object.keys(built.providers)).toEqual(['local']);
    expect(built.chain).toEqual([
      { tier: 'routine', provider: 'local', model: 'ssvc-2.0.3', billedAs: 'svc-triage-routine' },
      { tier: 'escalated-1', provider: 'local', model: 'ssvc-2.0.3', billedAs: 'svc-triage-v1' },
      { tier: 'escalated-2', provider: 'local', model: 'ssvc-2.0.3', billedAs: 'svc-triage-v1' },
    ]);
    expect(built.fallbacks.map((f) => f.missing)).toEqual([
      'OPENAI_API_KEY',
      'ANTHROPIC_API_KEY',
      'OPENAI_API_KEY',
    ]);
    const out = await routeTriage({
      request: {
        cveIds: ['CVE-2024-3400'],
        title: 'PAN-OS',
        severity: 'CRITICAL',
        asset: { criticality: 'HIGH', internetExposed: true },
      },
      enrichment: enrichmentMap(
        enrichment('CVE-2024-3400', {
          kev: true,
          epss: 0.94,
          cvssScore: 10,
          cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H',
        }),
      ),
      ...built,
    });
    expect(out.ok && out.response).toMatchObject({
      model: 'local:ssvc-2.0.3',
      priority: 'CRITICAL',
      recommendedAction: 'PATCH_IMMEDIATELY',
    });
    expect(out.hops.map((h) => h.tier)).toEqual(['escalated-1']);
    await built.close();
  });

  it('rejects a base URL override that is not http(s), naming the variable only', () => {
    expect(() =>
      buildProviders(DEFAULT_TRIAGE_CONFIG, { OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: 'ftp://x' }),
    ).toThrow('OPENAI_BASE_URL must be an http(s) URL');
  });
});

describe('routeTriage through real adapters and fake provider servers', () => {
  let openai: FakeServer;
  let anthropic: FakeServer;
  beforeAll(async () => {
    [openai, anthropic] = await Promise.all([startOpenAiFake(), startAnthropicFake()]);
  });
  afterAll(() => Promise.all([openai.close(), anthropic.close()]));

  const env = () => ({
    OPENAI_API_KEY: 'sk-openai-test-key-123456',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    ANTHROPIC_API_KEY: 'sk-ant-test-key-123456',
    ANTHROPIC_BASE_URL: anthropic.url,
  });
  const request = { cveIds: ['CVE-2023-4966'], title: 'Citrix Bleed', severity: 'HIGH' as const };
  const quiet = enrichmentMap(enrichment('CVE-2023-4966', { epss: 0.02, cvssScore: 7.5 }));

  it('escalates from OpenAI schema garbage (twice) to Anthropic, summing usage over hops', async () => {
    openai.script([{ kind: 'schema_violation' }]);
    anthropic.script([{ kind: 'success', usage: [1000, 100] }]);
    const built = buildProviders(DEFAULT_TRIAGE_CONFIG, env(), {
      http: { backoffBaseMs: 1, backoffMaxMs: 2 },
    });
    const out = await routeTriage({ request, enrichment: quiet, ...built });
    await built.close();
    expect(
      out.hops.map((h) => [h.tier, h.provider, h.providerModel, h.outcome, h.inputTokens, h.outputTokens]),
    ).toEqual([
      ['routine', 'openai', 'gpt-4.1-mini', 'schema_violation', 812, 21],
      ['routine', 'openai', 'gpt-4.1-mini', 'schema_violation', 812, 21],
      ['escalated-1', 'anthropic', 'claude-sonnet-4-5', 'answered', 1000, 100],
    ]);
    expect(out.ok && out.response).toMatchObject({
      model: 'anthropic:claude-sonnet-4-5',
      usage: { inputTokens: 2624, outputTokens: 142 },
    });
    expect(out.ok && out.response.triagedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('falls back to local for Anthropic tiers when only OpenAI is configured', () => {
    const { ANTHROPIC_API_KEY: _drop, ...onlyOpenAi } = env();
    const built = buildProviders(DEFAULT_TRIAGE_CONFIG, onlyOpenAi);
    expect(built.chain.map((t) => `${t.provider}:${t.model}`)).toEqual([
      'openai:gpt-4.1-mini',
      'local:ssvc-2.0.3',
      'openai:gpt-4.1',
    ]);
    return built.close();
  });
});
