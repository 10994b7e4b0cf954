/**
 * Shape and validation of `config/triage.json`: the escalation chain, router thresholds and
 * provider endpoints (docs/triage.md#providers). Secrets are never in the file: providers name the
 * environment variables to read, and `buildProviders` reads them from a plain object.
 */
import { readDefaultTriageFile } from '../../lib/config.js';
import {
  DEFAULT_REQUEST_SETTINGS,
  SAMPLING_PARAMETERS,
  TOKEN_LIMIT_PARAMETERS,
  type ModelRequestSettings,
  type ProviderRequestSettings,
  type SamplingParameters,
  type TokenLimitParameter,
} from './providers/model-settings.js';

/** Router thresholds (docs/triage.md#routing). */
export interface RouterThresholds {
  /** Answers below this confidence go one step further up. @defaultValue 0.7 */
  confidence: number;
  /** KEV with EPSS at or above this is high-risk. @defaultValue 0.1 */
  epss: number;
  /** CRITICAL with CVSS base at or above this is high-risk. @defaultValue 9.0 */
  cvss: number;
}

/** One step of the escalation chain as configured. */
export interface ChainTierConfig {
  tier: string;
  /** Key into `providers`, or `local`. */
  provider: string;
  model: string;
  /** Catalog model id (config/models.json) the tier is billed as. */
  billedAs: string;
}

/** A remote provider endpoint; the secret itself comes from the environment. */
export interface RemoteProviderConfig {
  kind: 'openai-compatible' | 'anthropic';
  baseUrl: string;
  /** Environment variable holding the API key; no key means the tier falls back to local. */
  apiKeyEnv: string;
  /** Environment variable that may override `baseUrl` (vLLM, Ollama, llama.cpp, a proxy). */
  baseUrlEnv?: string;
  /** Per HTTP attempt. @defaultValue 30000 */
  timeoutMs: number;
  /** Retries after the first attempt for 408/409/429/5xx/529. @defaultValue 2 */
  maxRetries: number;
  maxOutputTokens: number;
  requestsPerMinute: number;
  tokensPerMinute: number;
  /**
   * The window both limits are counted over: a minute, as providers publish them; another only
   * for an endpoint that counts over another window (a proxy, a test). @defaultValue 60000
   */
  rateLimitWindowMs: number;
  /**
   * `tokenLimitParameter`, `sampling` and per-model `models` overrides in the file
   * (`model-settings.ts`). @defaultValue `max_tokens`, `{ temperature: 0 }`, no overrides
   */
  requestSettings: ProviderRequestSettings;
}

/** The whole of `config/triage.json`. */
export interface TriageConfig {
  thresholds: RouterThresholds;
  /** Model name the local SSVC engine reports (`local:<localModel>`). */
  localModel: string;
  chain: ChainTierConfig[];
  providers: Record<string, RemoteProviderConfig>;
  /** Environment variable with a Redis URL for shared rate limits across processes. */
  rateLimitRedisUrlEnv?: string;
}

function fail(path: string, message: string): never {
  throw new Error(`config/triage.json: ${path} ${message}`);
}

function num(value: unknown, path: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    fail(path, `must be a number in [${min}, ${max}]`);
  }
  return value;
}

function str(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.length === 0) fail(path, 'must be a non-empty string');
  return value;
}

function tokenLimit(value: unknown, path: string, kind: unknown): TokenLimitParameter {
  if (!(TOKEN_LIMIT_PARAMETERS as readonly unknown[]).includes(value))
    fail(path, `must be one of ${TOKEN_LIMIT_PARAMETERS.join(', ')}`);
  if (kind === 'anthropic' && value !== 'max_tokens') fail(path, 'must be max_tokens for anthropic');
  return value as TokenLimitParameter;
}

function sampling(value: unknown, path: string): SamplingParameters {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'must be an object');
  const out: SamplingParameters = {};
  for (const [name, v] of Object.entries(value)) {
    if (!Object.hasOwn(SAMPLING_PARAMETERS, name))
      fail(`${path}.${name}`, `is not one of ${Object.keys(SAMPLING_PARAMETERS).join(', ')}`);
    const [min, max] = SAMPLING_PARAMETERS[name as keyof typeof SAMPLING_PARAMETERS];
    out[name as keyof SamplingParameters] = num(v, `${path}.${name}`, min, max);
  }
  return out;
}

/** A provider's `tokenLimitParameter`, `sampling` and per-model `models` overrides. */
function requestSettings(p: Record<string, unknown>, at: string): ProviderRequestSettings {
  const d = DEFAULT_REQUEST_SETTINGS;
  const models: Record<string, Partial<ModelRequestSettings>> = {};
  const raw = (p.models ?? {}) as Record<string, Record<string, unknown>>;
  if (typeof raw !== 'object' || Array.isArray(raw)) fail(`${at}.models`, 'must be an object');
  for (const [model, m] of Object.entries(raw)) {
    const mat = `${at}.models.${model}`;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) fail(mat, 'must be an object');
    models[model] = {
      ...(m.tokenLimitParameter === undefined
        ? {}
        : { tokenLimitParameter: tokenLimit(m.tokenLimitParameter, `${mat}.tokenLimitParameter`, p.kind) }),
      ...(m.sampling === undefined ? {} : { sampling: sampling(m.sampling, `${mat}.sampling`) }),
    };
  }
  return {
    tokenLimitParameter:
      p.tokenLimitParameter === undefined
        ? d.tokenLimitParameter
        : tokenLimit(p.tokenLimitParameter, `${at}.tokenLimitParameter`, p.kind),
    sampling: p.sampling === undefined ? d.sampling : sampling(p.sampling, `${at}.sampling`),
    models,
  };
}

/**
 * Validates a parsed triage config; throws one message naming the bad path, so the process
 * refuses to start (STYLE: configuration).
 */
export function parseTriageConfig(raw: unknown): TriageConfig {
  const c = raw as Partial<Record<keyof TriageConfig, unknown>>;
  const t = (c.thresholds ?? {}) as Record<string, unknown>;
  const thresholds = {
    confidence: num(t.confidence, 'thresholds.confidence', 0, 1),
    epss: num(t.epss, 'thresholds.epss', 0, 1),
    cvss: num(t.cvss, 'thresholds.cvss', 0, 10),
  };
  if (!Array.isArray(c.chain) || c.chain.length === 0) fail('chain', 'must list at least one tier');
  const providers: Record<string, RemoteProviderConfig> = {};
  for (const [name, p] of Object.entries((c.providers ?? {}) as Record<string, Record<string, unknown>>)) {
    const at = `providers.${name}`;
    if (name === 'local' || name === 'policy') fail(at, 'is a reserved provider name');
    if (p.kind !== 'openai-compatible' && p.kind !== 'anthropic')
      fail(`${at}.kind`, 'must be openai-compatible or anthropic');
    providers[name] = {
      kind: p.kind,
      baseUrl: str(p.baseUrl, `${at}.baseUrl`),
      apiKeyEnv: str(p.apiKeyEnv, `${at}.apiKeyEnv`),
      ...(p.baseUrlEnv === undefined ? {} : { baseUrlEnv: str(p.baseUrlEnv, `${at}.baseUrlEnv`) }),
      timeoutMs: num(p.timeoutMs ?? 30_000, `${at}.timeoutMs`, 100, 600_000),
      maxRetries: num(p.maxRetries ?? 2, `${at}.maxRetries`, 0, 10),
      maxOutputTokens: num(p.maxOutputTokens ?? 800, `${at}.maxOutputTokens`, 64, 32_768),
      requestsPerMinute: num(p.requestsPerMinute, `${at}.requestsPerMinute`, 1, 1e7),
      tokensPerMinute: num(p.tokensPerMinute, `${at}.tokensPerMinute`, 1, 1e10),
      rateLimitWindowMs: num(p.rateLimitWindowMs ?? 60_000, `${at}.rateLimitWindowMs`, 1_000, 3_600_000),
      requestSettings: requestSettings(p, at),
    };
  }
  const chain = (c.chain as Record<string, unknown>[]).map((tier, i) => {
    const provider = str(tier.provider, `chain[${i}].provider`);
    if (provider !== 'local' && providers[provider] === undefined)
      fail(`chain[${i}].provider`, `names unknown provider ${provider}`);
    return {
      tier: str(tier.tier, `chain[${i}].tier`),
      provider,
      model: str(tier.model, `chain[${i}].model`),
      billedAs: str(tier.billedAs, `chain[${i}].billedAs`),
    };
  });
  return {
    thresholds,
    localModel: str(c.localModel, 'localModel'),
    chain,
    providers,
    ...(c.rateLimitRedisUrlEnv === undefined
      ? {}
      : { rateLimitRedisUrlEnv: str(c.rateLimitRedisUrlEnv, 'rateLimitRedisUrlEnv') }),
  };
}

/** The checked-in defaults of `config/triage.json`, read and validated by lib/config.ts. */
export const DEFAULT_TRIAGE_CONFIG: TriageConfig = parseTriageConfig(readDefaultTriageFile());
