/**
 * The risk router (docs/triage.md#routing): picks the starting tier by risk, walks the
 * escalation chain on low confidence, repeated schema failures or provider errors, applies the
 * safety policy to the answer that stands, and records every hop for usage and billing.
 */
import { buildPrompt } from './prompt.js';
import { applySafetyPolicy, policyOnlyAnswer, type PolicyChange } from './safety-policy.js';
import { DEFAULT_TRIAGE_CONFIG, type RouterThresholds } from './triage-config.js';
import type {
  ChainTier,
  Clock,
  EnrichmentMap,
  EscalationReason,
  Hop,
  Prompt,
  Provider,
  ProviderResult,
  TriageAnswer,
  TriageRequest,
  TriageResponse,
} from './types.js';

/** The three high-risk conditions of docs/triage.md#routing. */
export type HighRiskReason = 'kev_with_epss' | 'critical_with_cvss' | 'kev_ransomware';

/**
 * Why a finding is high-risk (docs/triage.md#routing), empty when it is routine: a CVE in KEV whose EPSS is
 * at or above the threshold; severity CRITICAL with CVSS base at or above the threshold (the
 * request's own `cvssScore` wins over stored ones); a KEV entry with known ransomware use.
 */
export function highRiskReasons(
  request: TriageRequest,
  enrichment: EnrichmentMap,
  thresholds: RouterThresholds = DEFAULT_TRIAGE_CONFIG.thresholds,
): HighRiskReason[] {
  const records = (request.cveIds ?? []).flatMap((id) => enrichment.get(id) ?? []);
  const reasons: HighRiskReason[] = [];
  if (records.some((r) => r.kev && r.epss !== null && r.epss >= thresholds.epss))
    reasons.push('kev_with_epss');
  const stored = records.map((r) => r.cvssScore).filter((s): s is number => s !== null);
  const cvss = request.cvssScore ?? (stored.length > 0 ? Math.max(...stored) : null);
  if (request.severity === 'CRITICAL' && cvss !== null && cvss >= thresholds.cvss)
    reasons.push('critical_with_cvss');
  if (records.some((r) => r.kev && r.kevRansomware)) reasons.push('kev_ransomware');
  return reasons;
}

/** True when the finding starts one step up the chain (docs/triage.md#routing). */
export function isHighRisk(
  request: TriageRequest,
  enrichment: EnrichmentMap,
  thresholds?: RouterThresholds,
): boolean {
  return highRiskReasons(request, enrichment, thresholds).length > 0;
}

/** Everything `routeTriage` needs; all dependencies are passed in. */
export interface RouteTriageInput {
  request: TriageRequest;
  enrichment: EnrichmentMap;
  /** Keyed by `ChainTier.provider`; see `buildProviders`. */
  providers: Readonly<Record<string, Provider>>;
  chain: readonly ChainTier[];
  /** @defaultValue thresholds of config/triage.json */
  thresholds?: RouterThresholds;
  /** @defaultValue `Date` */
  clock?: Clock;
  /** Aborts the walk (client gone, job deadline); the best answer so far still stands. */
  signal?: AbortSignal;
  /** The request's prompt when the caller already built it (to check its size): never counted twice. */
  prompt?: Prompt;
}

/** Who produced the answer that was returned. `policy` means no model answered (docs/triage.md#routing). */
export type ServedBy = ChainTier | { tier: 'policy'; provider: 'policy'; model: 'ssvc'; billedAs: null };

/**
 * An answered triage (maybe `policy:ssvc`), or `triage_unavailable` / `overloaded`; hops are
 * recorded in both.
 */
export type RouteTriageResult =
  | {
      ok: true;
      response: TriageResponse;
      hops: Hop[];
      policyChanges: PolicyChange[];
      servedBy: ServedBy;
      highRisk: HighRiskReason[];
    }
  | {
      ok: false;
      /**
       * Maps to 503 `triage_unavailable` (docs/api.md#errors), or to 503 `overloaded` with `Retry-After`
       * when every tier tried was out of capacity (docs/operations.md#failure-behaviour): `retryAfterMs` is when the first
       * of them expects capacity again.
       */
      error: { code: 'triage_unavailable' | 'overloaded'; detail: string; retryAfterMs?: number };
      hops: Hop[];
      highRisk: HighRiskReason[];
    };

const SYSTEM_CLOCK: Clock = { now: () => Date.now() };

async function callProvider(
  provider: Provider | undefined,
  input: Parameters<Provider['triage']>[0],
  signal?: AbortSignal,
): Promise<ProviderResult> {
  if (provider === undefined) {
    return {
      ok: false,
      error: { kind: 'unavailable', retryable: false, message: 'provider not configured' },
    };
  }
  try {
    return await provider.triage(input, signal);
  } catch {
    // The contract says providers never throw; a bug in one must not take the request down.
    return { ok: false, error: { kind: 'unavailable', retryable: false, message: 'provider threw' } };
  }
}

function sameEngine(a: ChainTier | undefined, b: ChainTier | undefined): boolean {
  return a !== undefined && b !== undefined && a.provider === b.provider && a.model === b.model;
}

/**
 * Routes one triage request through the chain. Never throws for provider trouble.
 *
 * Walk: start at tier 0, or tier 1 when high-risk. On an answer with confidence below the
 * threshold, go one tier up (unless the next tier is the very same engine, which would only
 * repeat itself: the case when every tier falls back to `local`). On a schema violation retry the
 * same tier once, then go up. On any other provider error go up (the HTTP layer already retried
 * transient errors). The last answer received stands, even a low-confidence one, when higher tiers
 * fail. With no answer at all, the policy-only SSVC answer, else `triage_unavailable`.
 */
export async function routeTriage(input: RouteTriageInput): Promise<RouteTriageResult> {
  const { request, enrichment, providers, chain, signal } = input;
  const thresholds = input.thresholds ?? DEFAULT_TRIAGE_CONFIG.thresholds;
  const clock = input.clock ?? SYSTEM_CLOCK;
  const highRisk = highRiskReasons(request, enrichment, thresholds);
  const prompt = input.prompt ?? buildPrompt(request, enrichment);
  const hops: Hop[] = [];
  let kept: { answer: TriageAnswer; tier: ChainTier } | null = null;
  /** Whether every failed hop so far was a tier out of capacity, and when the first frees up. */
  let onlyBusy = true;
  let busyRetryMs = Infinity;

  walk: for (let i = highRisk.length > 0 ? Math.min(1, chain.length - 1) : 0; i < chain.length; i++) {
    const tier = chain[i];
    if (tier === undefined) break;
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) break walk;
      const started = clock.now();
      const result = await callProvider(
        providers[tier.provider],
        { request, enrichment, prompt, model: tier.model },
        signal,
      );
      const hop: Hop = {
        tier: tier.tier,
        provider: tier.provider,
        providerModel: tier.model,
        billedAs: tier.billedAs,
        inputTokens: result.usage?.inputTokens ?? 0,
        outputTokens: result.usage?.outputTokens ?? 0,
        latencyMs: Math.max(0, clock.now() - started),
        outcome: 'answered',
        escalationReason: null,
      };
      hops.push(hop);
      if (result.ok) {
        kept = { answer: result.answer, tier };
        const confidence = result.answer.confidenceScore;
        // NaN or a non-number counts as low confidence: the answer has not earned trust.
        if (typeof confidence === 'number' && confidence >= thresholds.confidence) break walk;
        hop.outcome = 'low_confidence';
        if (i === chain.length - 1 || sameEngine(tier, chain[i + 1])) break walk;
        hop.escalationReason = 'low_confidence';
        continue walk;
      }
      hop.errorKind = result.error.kind;
      if (result.error.kind === 'rate_limited')
        busyRetryMs = Math.min(busyRetryMs, result.error.retryAfterMs ?? 1_000);
      else onlyBusy = false;
      let reason: EscalationReason = 'provider_error';
      if (result.error.kind === 'schema_violation') {
        hop.outcome = 'schema_violation';
        reason = attempt === 1 ? 'retry_schema_violation' : 'schema_violation_twice';
      } else {
        hop.outcome = 'provider_error';
      }
      hop.escalationReason = reason;
      if (reason !== 'retry_schema_violation') continue walk;
    }
  }

  const triagedAt = new Date(clock.now()).toISOString();
  const usage = {
    inputTokens: hops.reduce((sum, h) => sum + h.inputTokens, 0),
    outputTokens: hops.reduce((sum, h) => sum + h.outputTokens, 0),
  };
  if (kept !== null) {
    const { answer, changes } = applySafetyPolicy(kept.answer, request, enrichment);
    const model = `${kept.tier.provider}:${kept.tier.model}`;
    return {
      ok: true,
      response: { ...answer, model, triagedAt, usage },
      hops,
      policyChanges: changes,
      servedBy: kept.tier,
      highRisk,
    };
  }
  const fallback = policyOnlyAnswer(request, enrichment);
  if (fallback !== null) {
    return {
      ok: true,
      response: { ...fallback.answer, model: 'policy:ssvc', triagedAt, usage },
      hops,
      policyChanges: fallback.changes,
      servedBy: { tier: 'policy', provider: 'policy', model: 'ssvc', billedAs: null },
      highRisk,
    };
  }
  if (!signal?.aborted && hops.length > 0 && onlyBusy) {
    return {
      ok: false,
      error: {
        code: 'overloaded',
        detail: 'Every model in the escalation chain is at its rate limit; retry after the time given.',
        retryAfterMs: Number.isFinite(busyRetryMs) ? busyRetryMs : 1_000,
      },
      hops,
      highRisk,
    };
  }
  const detail = signal?.aborted
    ? 'Triage was cancelled before any model answered.'
    : 'No model in the escalation chain could answer and no safe answer could be formed.';
  return { ok: false, error: { code: 'triage_unavailable', detail }, hops, highRisk };
}
