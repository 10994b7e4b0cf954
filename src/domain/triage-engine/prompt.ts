/**
 * The prompt every model provider sees. One builder for all providers keeps answers comparable
 * across tiers, and lets the local engine count the same tokens a model would have read.
 * Only the finding and public enrichment go in: no workspace ids, keys or other tenants' data.
 *
 * A request's prompt is built and counted ONCE (`buildPrompt`): the size check against the
 * catalog `max`, the providers' rate-limit weight and the local engine's usage all read the
 * same {@link Prompt}, handed along in `ProviderInput` (BPE tokenizing is the costly part).
 */
import { countTokens } from 'gpt-tokenizer';
import { deriveSignals } from './signals.js';
import type { EnrichmentMap, Prompt, TriageRequest } from './types.js';

export const SYSTEM_PROMPT = [
  'You triage one vulnerability finding for a security team.',
  'Decide how urgently it must be handled (priority), what to do (recommendedAction), and whether the submitted severity is wrong (severityOverride, null when you agree).',
  'Weigh, in this order: known exploitation (CISA KEV), exploit prediction (FIRST EPSS), CVSS base score and vector, and the asset (criticality, environment, internet exposure).',
  'Use CISA SSVC reasoning: active exploitation of an automatable, total-impact flaw on a high-impact asset means Act.',
  'Write the reasoning in two to five plain sentences that cite the evidence you used.',
  'confidenceScore is your confidence from 0 to 1; below 0.7 means a senior reviewer should look again.',
  'Answer only through the required structured output.',
].join('\n');

/** Tokens of the fixed system prompt (it never changes, so it is counted once per process). */
const SYSTEM_PROMPT_TOKENS = countTokens(SYSTEM_PROMPT);

/** The user message: the finding and what the enrichment store knows, as compact JSON. */
export function buildUserPrompt(request: TriageRequest, enrichment: EnrichmentMap): string {
  const s = deriveSignals(request, enrichment);
  const cves = (request.cveIds ?? []).map((id) => {
    const r = enrichment.get(id);
    if (r === undefined) return { cveId: id, known: false };
    return {
      cveId: id,
      kev: r.kev,
      kevRansomware: r.kevRansomware,
      kevDueDate: r.kevDueDate,
      epss: r.epss,
      epssPercentile: r.epssPercentile,
      cvssScore: r.cvssScore,
      cvssVersion: r.cvssVersion,
      cvssVector: r.cvssVector,
    };
  });
  const finding = {
    title: request.title,
    severity: request.severity,
    description: request.description ?? null,
    cvssScore: request.cvssScore ?? null,
    cvssVector: request.cvssVector ?? null,
    asset: request.asset ?? null,
  };
  const ssvc = { ...s.ssvc, decision: s.decision, treeVersion: '2.0.3' };
  return `Finding:\n${JSON.stringify(finding)}\n\nEnrichment:\n${JSON.stringify(cves)}\n\nDerived SSVC inputs:\n${JSON.stringify(ssvc)}`;
}

/**
 * The request's prompt and its input tokens, counted with gpt-tokenizer's default encoding
 * (o200k_base): the catalog's `max` input tokens (docs/triage.md#model-catalog: larger requests get 413
 * `payload_too_large`), token-weighted rate limits, and the local engine's usage.
 */
export function buildPrompt(request: TriageRequest, enrichment: EnrichmentMap): Prompt {
  const user = buildUserPrompt(request, enrichment);
  return { system: SYSTEM_PROMPT, user, inputTokens: SYSTEM_PROMPT_TOKENS + countTokens(user) };
}
