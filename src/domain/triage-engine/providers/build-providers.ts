/**
 * Builds the providers and the resolved escalation chain from `config/triage.json` and the
 * environment (given as a plain object: only src/lib/config.ts reads `process.env`).
 * A tier whose provider has no credential is served by `local` (docs/triage.md#routing), keeping its
 * tier name and billing model, so with no credentials at all the service triages offline.
 *
 * Environment variables read, with the shipped config: `OPENAI_API_KEY`, `OPENAI_BASE_URL`,
 * `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `REDIS_URL` (names come from the config's
 * `apiKeyEnv`, `baseUrlEnv` and `rateLimitRedisUrlEnv`).
 */
import type { Redis } from 'ioredis';
import type { TriageConfig } from '../triage-config.js';
import type { ChainTier, Provider } from '../types.js';
import { createAnthropicProvider } from './anthropic.js';
import { createLocalProvider } from './local.js';
import { createOpenAiCompatibleProvider, type RemoteProviderOptions } from './openai-compatible.js';
import { createProviderLimiter, type ProviderLimiter } from './rate-limiter.js';
import type { Limits } from './capacity-window.js';

/** Environment as a plain object (e.g. the validated config of src/lib/config.ts). */
export type Env = Readonly<Record<string, string | undefined>>;

/** Optional shared resources and test seams. */
export interface BuildProvidersOptions {
  /** Prefix of the shared limiters' ids, so deployments sharing a Redis keep separate budgets. */
  idPrefix?: string;
  /** An existing ioredis client for shared rate limits; wins over the Redis URL variable. */
  redis?: Redis;
  /** Test seams of the HTTP helper. */
  http?: RemoteProviderOptions['http'];
  /** Longest a call waits for provider capacity (PROVIDER_QUEUE_MAX_WAIT_MS). @defaultValue 5000 */
  maxWaitMs?: number;
  /** Told when a provider's limits in force differ from its configuration (another process's are newer). */
  onLimits?: (provider: string, inForce: Limits, configured: Limits) => void;
  /** Told when the shared limit store failed and a call used a per-process window. */
  onLimiterStoreError?: (provider: string, err: Error) => void;
}

/** Providers, resolved chain and shutdown hook. */
export interface BuiltProviders {
  /** Keyed by provider id; always contains `local`. */
  providers: Record<string, Provider>;
  /** The chain with credential-less tiers mapped to `local`; pass to `routeTriage`. */
  chain: ChainTier[];
  /** Tiers that fell back to local, for a start-up log line (names only, never values). */
  fallbacks: { tier: string; provider: string; missing: string }[];
  /** Closes rate-limiter connections; call on shutdown. */
  close(): Promise<void>;
}

function baseUrlFrom(env: Env, variable: string | undefined, fallback: string): string {
  const value = variable === undefined ? undefined : env[variable]?.trim();
  const url = value || fallback;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${variable ?? 'baseUrl'} must be an http(s) URL`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new Error(`${variable ?? 'baseUrl'} must be an http(s) URL`);
  return url;
}

/** Builds providers and the chain; throws only for invalid configuration (at start-up). */
export function buildProviders(
  config: TriageConfig,
  env: Env,
  options: BuildProvidersOptions = {},
): BuiltProviders {
  const local = createLocalProvider('local');
  const providers: Record<string, Provider> = { local };
  const limiters: ProviderLimiter[] = [];
  const redisUrl =
    config.rateLimitRedisUrlEnv === undefined
      ? undefined
      : env[config.rateLimitRedisUrlEnv]?.trim() || undefined;
  const redis = options.redis ?? redisUrl;

  for (const [name, p] of Object.entries(config.providers)) {
    const apiKey = env[p.apiKeyEnv]?.trim();
    if (!apiKey) continue;
    const limiter = createProviderLimiter({
      id: `${options.idPrefix ?? 'svc'}:triage-provider-${name}`,
      requestsPerMinute: p.requestsPerMinute,
      tokensPerMinute: p.tokensPerMinute,
      intervalMs: p.rateLimitWindowMs,
      ...(redis === undefined ? {} : { redis }),
      ...(options.maxWaitMs === undefined ? {} : { maxWaitMs: options.maxWaitMs }),
      onLimits: (inForce, configured) => options.onLimits?.(name, inForce, configured),
      onStoreError: (err) => options.onLimiterStoreError?.(name, err),
    });
    limiters.push(limiter);
    const common: RemoteProviderOptions = {
      name,
      baseUrl: baseUrlFrom(env, p.baseUrlEnv, p.baseUrl),
      apiKey,
      timeoutMs: p.timeoutMs,
      maxRetries: p.maxRetries,
      maxOutputTokens: p.maxOutputTokens,
      requestSettings: p.requestSettings,
      limiter,
      ...(options.http === undefined ? {} : { http: options.http }),
    };
    providers[name] =
      p.kind === 'anthropic' ? createAnthropicProvider(common) : createOpenAiCompatibleProvider(common);
  }

  const fallbacks: BuiltProviders['fallbacks'] = [];
  const chain = config.chain.map((tier): ChainTier => {
    if (providers[tier.provider] !== undefined) return { ...tier };
    fallbacks.push({
      tier: tier.tier,
      provider: tier.provider,
      missing: config.providers[tier.provider]?.apiKeyEnv ?? tier.provider,
    });
    return { tier: tier.tier, provider: 'local', model: config.localModel, billedAs: tier.billedAs };
  });

  return {
    providers,
    chain,
    fallbacks,
    async close() {
      await Promise.all(limiters.map((l) => l.close()));
    },
  };
}
