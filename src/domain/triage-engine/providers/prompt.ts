/**
 * The prompt every model provider sees. One builder for all providers keeps answers comparable
 * across tiers, and lets the local engine count the same tokens a model would have read.
 * Only the finding and public enrichment go in: no workspace ids, keys or other tenants' data.
 */
import { countTokens } from 'gpt-tokenizer';
import { deriveSignals } from '../signals.js';
import type { ProviderInput } from '../types.js';

export const SYSTEM_PROMPT = [
  'You triage one vulnerability finding for a security team.',
  'Decide how urgently it must be handled (priority), what to do (recommendedAction), and whether the submitted severity is wrong (severityOverride, null when you agree).',
  'Weigh, in this order: known exploitation (CISA KEV), exploit prediction (FIRST EPSS), CVSS base score and vector, and the asset (criticality, environment, internet exposure).',
  'Use CISA SSVC reasoning: active exploitation of an automatable, total-impact flaw on a high-impact asset means Act.',
  'Write the reasoning in two to five plain sentences that cite the evidence you used.',
  'confidenceScore is your confidence from 0 to 1; below 0.7 means a senior reviewer should look again.',
  'Answer only through the required structured output.',
].join('\n');

/** The user message: the finding and what the enrichment store knows, as compact JSON. */
export function buildUserPrompt(input: ProviderInput): string {
  const { request, enrichment } = input;
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

let systemPromptTokens: number | undefined;

// The same prompt is counted more than once per request (the size check, the rate limiter's
// weight, the local engine's usage); BPE tokenizing is the costly part, so recent counts are kept.
const recentCounts = new Map<string, number>();
const RECENT_MAX = 128; // prompts are at most 64 KiB: a few MB at worst

function countPromptTokens(text: string): number {
  let n = recentCounts.get(text);
  if (n === undefined) {
    n = countTokens(text);
    if (recentCounts.size >= RECENT_MAX) recentCounts.delete(recentCounts.keys().next().value as string);
    recentCounts.set(text, n);
  }
  return n;
}

/**
 * Input tokens of the prompt for `input`, counted with gpt-tokenizer's default encoding
 * (o200k_base). Used for token-weighted rate limits, the local engine's usage, and by the HTTP
 * layer to enforce the catalog's `max` input tokens (DECISIONS §6: larger requests get 413
 * `payload_too_large`).
 */
export function promptTokens(input: ProviderInput): number {
  systemPromptTokens ??= countTokens(SYSTEM_PROMPT);
  return systemPromptTokens + countPromptTokens(buildUserPrompt(input));
}
