/**
 * Types of the triage domain (docs/triage.md#request-and-answer).
 *
 * Glossary:
 * - **tier**: one step of the escalation chain (`routine`, `escalated-1`, ...), naming a provider,
 *   the provider's model, and the catalog model (docs/triage.md#model-catalog) the step is billed as.
 * - **provider**: an engine that answers a triage request (`openai`, `anthropic`, `local`).
 * - **hop**: one call to one provider at one tier, successful or not.
 * - **answer**: what a provider said (before the safety policy); **response**: what the API returns.
 */
import type { CveEnrichment } from '../enrichment/types.js';

/** docs/triage.md#request-and-answer: values of `severity`, `severityOverride` and `priority`, most to least severe. */
export const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Priority shares the severity scale (docs/triage.md#request-and-answer). */
export const PRIORITIES = SEVERITIES;
export type Priority = Severity;

/** docs/triage.md#request-and-answer: values of `recommendedAction`. */
export const RECOMMENDED_ACTIONS = [
  'PATCH_IMMEDIATELY',
  'PATCH_SCHEDULED',
  'MITIGATE',
  'MONITOR',
  'INVESTIGATE',
  'ACCEPT_RISK',
] as const;
export type RecommendedAction = (typeof RECOMMENDED_ACTIONS)[number];

/** docs/triage.md#request-and-answer: values of `asset.type`. */
export const ASSET_TYPES = [
  'APPLICATION',
  'HOST',
  'CONTAINER',
  'CLOUD_RESOURCE',
  'NETWORK_DEVICE',
  'DATABASE',
  'OTHER',
] as const;
export type AssetType = (typeof ASSET_TYPES)[number];

/** docs/triage.md#request-and-answer: values of `asset.environment`. */
export const ASSET_ENVIRONMENTS = ['PRODUCTION', 'STAGING', 'DEVELOPMENT', 'TEST'] as const;
export type AssetEnvironment = (typeof ASSET_ENVIRONMENTS)[number];

/** docs/triage.md#request-and-answer: values of `asset.criticality`. */
export const ASSET_CRITICALITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'] as const;
export type AssetCriticality = (typeof ASSET_CRITICALITIES)[number];

/** Optional asset context of a finding (docs/triage.md#request-and-answer). Every field is optional. */
export interface TriageAsset {
  name?: string;
  type?: AssetType;
  environment?: AssetEnvironment;
  criticality?: AssetCriticality;
  internetExposed?: boolean;
}

/** Body of `POST /api/v1/triage` after validation (docs/triage.md#request-and-answer). */
export interface TriageRequest {
  /** May be missing or empty only when `description` is given. */
  cveIds?: string[];
  title: string;
  severity: Severity;
  description?: string;
  asset?: TriageAsset;
  /** The scanner's CVSS base score; wins over the stored one (docs/triage.md#request-and-answer). */
  cvssScore?: number;
  cvssVector?: string;
}

/** What a provider answers, before the safety policy. */
export interface TriageAnswer {
  priority: Priority;
  recommendedAction: RecommendedAction;
  reasoning: string;
  /** In [0, 1] once the safety policy has run. */
  confidenceScore: number;
  /** `null` when the triage agrees with the submitted severity (docs/triage.md#request-and-answer). */
  severityOverride: Severity | null;
}

/** Token counts of one call, or summed over calls. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

/** Response of `POST /api/v1/triage`, field for field docs/triage.md#request-and-answer. */
export interface TriageResponse {
  priority: Priority;
  recommendedAction: RecommendedAction;
  reasoning: string;
  confidenceScore: number;
  severityOverride: Severity | null;
  /** `<provider>:<model_name>`, e.g. `openai:gpt-4o-mini`, `local:ssvc-2.0.3`, `policy:ssvc`. */
  model: string;
  /** ISO 8601 UTC with milliseconds, e.g. `2026-11-21T19:15:07.123Z`. */
  triagedAt: string;
  usage: TokenUsage;
}

/** Enrichment for the request's CVEs; CVEs the store does not know are absent (no signal). */
export type EnrichmentMap = ReadonlyMap<string, CveEnrichment>;

/** Why a provider call failed; `retryable` says whether the same call may succeed later. */
export type ProviderErrorKind =
  | 'rate_limited'
  | 'unavailable'
  | 'timeout'
  | 'bad_response'
  | 'schema_violation'
  | 'insufficient_quota'
  | 'auth';

/** A failed provider call, as data: the router escalates on it instead of catching exceptions. */
export interface ProviderError {
  kind: ProviderErrorKind;
  retryable: boolean;
  /** Safe to log: never contains credentials. */
  message: string;
  /** What the provider asked us to wait before trying again, when it said so. */
  retryAfterMs?: number;
}

/** A request's prompt, built and counted once per request (`prompt.ts`). */
export interface Prompt {
  system: string;
  user: string;
  /** Tokens of `system` and `user` together (o200k_base). */
  inputTokens: number;
}

/** What a provider is asked: the request, its enrichment, its prompt, and which of its models to use. */
export interface ProviderInput {
  request: TriageRequest;
  enrichment: EnrichmentMap;
  /** Built and counted once for the whole request, whichever tiers it walks. */
  prompt: Prompt;
  /** The provider's own model name for this tier (e.g. `gpt-4o-mini`). */
  model: string;
}

/** Provider calls return results, never throw (STYLE: errors), so escalation is control flow. */
export type ProviderResult =
  | { ok: true; answer: TriageAnswer; usage: TokenUsage; raw: unknown }
  | { ok: false; error: ProviderError; usage?: TokenUsage };

/** A triage engine. Implementations must not throw; failures come back as `{ ok: false }`. */
export interface Provider {
  /** Provider id as used in `model` (`<provider>:<model_name>`) and in `config/triage.json`. */
  readonly name: string;
  /**
   * Answers inside this process, at no cost outside it (the local SSVC engine, the in-house
   * model): a request served only by such providers may take its AI call when its answer is
   * stored instead of reserving it before (no money is at stake if the quota turns out spent).
   */
  readonly inProcess?: boolean;
  triage(input: ProviderInput, signal?: AbortSignal): Promise<ProviderResult>;
}

/** One step of the escalation chain after credentials were resolved (see `buildProviders`). */
export interface ChainTier {
  /** e.g. `routine`, `escalated-1`. */
  tier: string;
  /** Key into the providers record. */
  provider: string;
  /** The provider's model name. */
  model: string;
  /** Catalog model id this tier is billed as (docs/triage.md#model-catalog): `svc-triage-routine` or `svc-triage-v1`. */
  billedAs: string;
}

/** What a hop led to. */
export type HopOutcome = 'answered' | 'low_confidence' | 'schema_violation' | 'provider_error';

/** Why the router left a tier after this hop; `null` when the hop's answer was kept. */
export type EscalationReason =
  'retry_schema_violation' | 'schema_violation_twice' | 'low_confidence' | 'provider_error';

/** One call to one provider, recorded for usage, billing and audit. */
export interface Hop {
  tier: string;
  provider: string;
  providerModel: string;
  billedAs: string;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  outcome: HopOutcome;
  /** Set when `outcome` is `provider_error` or `schema_violation`. */
  errorKind?: ProviderErrorKind;
  escalationReason: EscalationReason | null;
}

/** Milliseconds since the epoch; injected so tests and benchmarks control time. */
export interface Clock {
  now(): number;
}
