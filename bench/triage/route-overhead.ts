/**
 * Overhead of routeTriage beyond the provider's own time (bench/triage/README.md).
 * Run: npx tsx bench/triage/route-overhead.ts [iterations]
 *
 * Scenarios, each run sequentially after a warm-up:
 * - local: the local SSVC engine (provider time = its own compute, incl. tokenization);
 * - in-process 50 ms: a fake provider that answers after a fixed 50 ms timer;
 * - HTTP 50 ms: the real OpenAI-compatible adapter against the fake Chat Completions server on
 *   127.0.0.1 answering after a fixed 50 ms; overhead is reported both against the time spent
 *   inside provider.triage and against the nominal 50 ms (the second includes the adapter:
 *   prompt building, token counting, fetch, JSON parsing).
 */
import { performance } from 'node:perf_hooks';
import { createLocalProvider } from '../../src/domain/triage-engine/providers/local.js';
import { createOpenAiCompatibleProvider } from '../../src/domain/triage-engine/providers/openai-compatible.js';
import { routeTriage } from '../../src/domain/triage-engine/router.js';
import type { ChainTier, Provider, TriageRequest } from '../../src/domain/triage-engine/types.js';
import type { CveEnrichment } from '../../src/domain/enrichment/types.js';
import { startOpenAiFake } from '../../test/helpers/fake-providers/openai-fake.js';

const iterations = Number(process.argv[2] ?? 300);
const CVE = 'CVE-2023-4966';
const request: TriageRequest = {
  cveIds: [CVE],
  title: 'Citrix Bleed: NetScaler ADC session token leak',
  severity: 'HIGH',
  description: 'Sensitive information disclosure in NetScaler ADC and Gateway when configured as a gateway.',
  asset: {
    name: 'edge-gw-1',
    type: 'NETWORK_DEVICE',
    environment: 'PRODUCTION',
    criticality: 'HIGH',
    internetExposed: false,
  },
};
const record: CveEnrichment = {
  cveId: CVE,
  kev: false,
  kevRansomware: false,
  kevDateAdded: null,
  kevDueDate: null,
  epss: 0.04,
  epssPercentile: 0.9,
  epssDate: null,
  cvssScore: 7.5,
  cvssVersion: '3.1',
  cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N',
};
const enrichment = new Map([[CVE, record]]);

/** Wraps a provider to measure the time spent inside triage(). */
function timed(provider: Provider): { provider: Provider; last: () => number } {
  let spent = 0;
  return {
    last: () => spent,
    provider: {
      name: provider.name,
      async triage(input, signal) {
        const t0 = performance.now();
        try {
          return await provider.triage(input, signal);
        } finally {
          spent = performance.now() - t0;
        }
      },
    },
  };
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function scenario(name: string, provider: Provider, model: string, n: number, nominalMs?: number) {
  const t = timed(provider);
  const chain: ChainTier[] = [{ tier: 'routine', provider: 'p', model, billedAs: 'svc-triage-routine' }];
  const inner: number[] = [];
  const nominal: number[] = [];
  for (let i = 0; i < n + Math.min(50, n); i++) {
    const t0 = performance.now();
    const out = await routeTriage({ request, enrichment, providers: { p: t.provider }, chain });
    const total = performance.now() - t0;
    if (!out.ok || out.hops.length !== 1)
      throw new Error(`${name}: unexpected route ${JSON.stringify(out.hops)}`);
    if (i < Math.min(50, n)) continue; // warm-up
    inner.push(total - t.last());
    if (nominalMs !== undefined) nominal.push(total - nominalMs);
  }
  inner.sort((a, b) => a - b);
  nominal.sort((a, b) => a - b);
  const f = (x: number) => x.toFixed(3);
  const row = [name, String(n), f(pct(inner, 50)), f(pct(inner, 99))];
  row.push(...(nominalMs === undefined ? ['—', '—'] : [f(pct(nominal, 50)), f(pct(nominal, 99))]));
  console.log(`| ${row.join(' | ')} |`);
}

const slow: Provider = {
  name: 'fake',
  triage: () =>
    new Promise((resolve) =>
      setTimeout(
        () =>
          resolve({
            ok: true,
            answer: {
              priority: 'HIGH',
              recommendedAction: 'PATCH_SCHEDULED',
              reasoning: 'fake',
              confidenceScore: 0.9,
              severityOverride: null,
            },
            usage: { inputTokens: 800, outputTokens: 60 },
            raw: {},
          }),
        50,
      ),
    ),
};

const server = await startOpenAiFake([{ kind: 'slow', delayMs: 50, then: { kind: 'success' } }]);
const http = createOpenAiCompatibleProvider({
  name: 'openai',
  baseUrl: `${server.url}/v1`,
  apiKey: 'sk-bench',
  timeoutMs: 5000,
  maxRetries: 0,
  maxOutputTokens: 400,
});

console.log(`node ${process.version}, ${iterations} iterations per remote scenario, times in ms`);
console.log(
  '| scenario | n | p50 total − provider | p99 total − provider | p50 total − 50 ms | p99 total − 50 ms |',
);
console.log('|---|---|---|---|---|---|');
await scenario('local engine', createLocalProvider(), 'ssvc-2.0.3', iterations * 10);
await scenario('in-process fake, 50 ms', slow, 'fake', iterations, 50);
await scenario('HTTP fake (OpenAI wire), 50 ms', http, 'gpt-4.1-mini', iterations, 50);
await server.close();
