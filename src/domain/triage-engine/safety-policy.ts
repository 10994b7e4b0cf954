/**
 * The deterministic safety policy every answer passes before it is returned (docs/triage.md#safety-policy). Invariant: the policy never lowers risk. It only raises priority, raises action
 * urgency (see ACTION_RANK), nulls a downgrading severity override, or replaces values outside
 * the enums; the one lowering it performs is clamping a confidence above 1 to 1.
 *
 * Rules, in the order they run (later rules see earlier changes):
 * - ENUMS: unknown priority → HIGH, unknown action → INVESTIGATE (a human looks), unknown
 *   severityOverride → null, non-string reasoning → ''.
 * - STORABLE_TEXT: U+0000 removed from reasoning and lone surrogates replaced by U+FFFD (neither
 *   can be stored; a provider's text must not turn an answer into a failed request).
 * - CONFIDENCE_CLAMP: confidence into [0, 1]; NaN or non-number → 0.
 * - SSVC_FLOOR (floor table below, decision from ssvc.ts over KEV, EPSS, CVSS and asset).
 * - KEV_FLOOR: a CVE in KEV never below HIGH.
 * - KEV_EXPOSED: KEV and internet-exposed → CRITICAL and PATCH_IMMEDIATELY. CRITICAL because an
 *   actively exploited flaw reachable from the internet is the worst case CISA describes.
 * - NO_ACCEPT_RISK: ACCEPT_RISK → PATCH_SCHEDULED for KEV, EPSS >= 0.1, or exposed with CVSS >= 7.
 * - UNKNOWN_CRITICAL: a finding submitted as CRITICAL or with CVSS >= 9.0 whose exposure is unknown
 *   (no `asset.internetExposed`) is never below MEDIUM and never ACCEPT_RISK (→ PATCH_SCHEDULED):
 *   without asset context nobody has shown it unreachable, so its risk cannot be waved away.
 * - PRIORITY_ACTION_CONSISTENCY: CRITICAL needs PATCH_IMMEDIATELY or MITIGATE; HIGH cannot be
 *   MONITOR or ACCEPT_RISK (→ PATCH_SCHEDULED); PATCH_IMMEDIATELY needs priority >= HIGH.
 * - KEV_NO_SEVERITY_DOWNGRADE: a KEV finding's severityOverride below the submitted severity → null.
 * - SEVERITY_OVERRIDE_SAME: an override equal to the submitted severity → null (docs/triage.md#request-and-answer).
 */
import { isStorableText, storableText } from '../../lib/storable-text.js';
import { ACTION_RANK, ACTION_WORDS, SEVERITY_RANK, ssvcBaseline } from './baseline.js';
import { deriveSignals, type RiskSignals } from './signals.js';
import type { SsvcDecision } from './ssvc.js';
import {
  PRIORITIES,
  RECOMMENDED_ACTIONS,
  SEVERITIES,
  type EnrichmentMap,
  type Priority,
  type RecommendedAction,
  type TriageAnswer,
  type TriageRequest,
} from './types.js';

/** Bump on any change of behaviour; stored with each triage so answers can be audited. */
export const SAFETY_POLICY_VERSION = '2026-11-27.1';

/** Names of the policy rules, as they appear in `[policy:RULE]` tags. */
export type PolicyRule =
  | 'ENUMS'
  | 'STORABLE_TEXT'
  | 'CONFIDENCE_CLAMP'
  | 'SSVC_FLOOR'
  | 'KEV_FLOOR'
  | 'KEV_EXPOSED'
  | 'NO_ACCEPT_RISK'
  | 'UNKNOWN_CRITICAL'
  | 'PRIORITY_ACTION_CONSISTENCY'
  | 'KEV_NO_SEVERITY_DOWNGRADE'
  | 'SEVERITY_OVERRIDE_SAME';

/** One change the policy made, for audit next to the stored triage. */
export interface PolicyChange {
  rule: PolicyRule;
  field: keyof TriageAnswer;
  from: unknown;
  to: unknown;
}

/** An answer as a provider may have produced it: any field may be missing or off-enum. */
export type UncheckedAnswer = { [K in keyof TriageAnswer]?: unknown };

/** Floor per SSVC decision: minimum priority and the actions that satisfy it (else `action`). */
export const SSVC_FLOOR: Record<
  SsvcDecision,
  { minPriority: Priority | null; allowed: readonly RecommendedAction[]; action: RecommendedAction }
> = {
  Act: { minPriority: 'HIGH', allowed: ['PATCH_IMMEDIATELY', 'MITIGATE'], action: 'PATCH_IMMEDIATELY' },
  Attend: {
    minPriority: 'MEDIUM',
    allowed: ['PATCH_IMMEDIATELY', 'MITIGATE', 'PATCH_SCHEDULED'],
    action: 'PATCH_SCHEDULED',
  },
  'Track*': {
    minPriority: null,
    allowed: RECOMMENDED_ACTIONS.filter((a) => a !== 'ACCEPT_RISK'),
    action: 'MONITOR',
  },
  Track: { minPriority: null, allowed: RECOMMENDED_ACTIONS, action: 'MONITOR' },
};

/** ACCEPT_RISK is forbidden at or above these (docs/triage.md#safety-policy). */
export const POLICY_THRESHOLDS = { epss: 0.1, exposedCvss: 7.0, unknownCriticalCvss: 9.0 } as const;

function isOneOf<T extends string>(values: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (values as readonly string[]).includes(value);
}

class Draft {
  readonly changes: PolicyChange[] = [];
  constructor(public answer: TriageAnswer) {}

  set<K extends keyof TriageAnswer>(
    rule: PolicyRule,
    field: K,
    to: TriageAnswer[K],
    from: unknown = this.answer[field],
  ): void {
    if (Object.is(from, to)) return;
    this.changes.push({ rule, field, from, to });
    this.answer = { ...this.answer, [field]: to };
  }

  raisePriority(rule: PolicyRule, min: Priority): void {
    if (SEVERITY_RANK[this.answer.priority] < SEVERITY_RANK[min]) this.set(rule, 'priority', min);
  }

  requireAction(rule: PolicyRule, allowed: readonly RecommendedAction[], fallback: RecommendedAction): void {
    if (allowed.includes(this.answer.recommendedAction)) return;
    // Never trade an action for a less urgent one, even if it is outside `allowed`.
    if (ACTION_RANK[this.answer.recommendedAction] >= ACTION_RANK[fallback]) return;
    this.set(rule, 'recommendedAction', fallback);
  }
}

function normalise(raw: UncheckedAnswer, draft: Draft): void {
  if (!isOneOf(PRIORITIES, raw.priority)) draft.set('ENUMS', 'priority', 'HIGH', raw.priority);
  if (!isOneOf(RECOMMENDED_ACTIONS, raw.recommendedAction)) {
    draft.set('ENUMS', 'recommendedAction', 'INVESTIGATE', raw.recommendedAction);
  }
  if (raw.severityOverride !== null && !isOneOf(SEVERITIES, raw.severityOverride)) {
    draft.set('ENUMS', 'severityOverride', null, raw.severityOverride);
  }
  if (typeof raw.reasoning !== 'string') draft.set('ENUMS', 'reasoning', '', raw.reasoning);
  else if (!isStorableText(raw.reasoning)) {
    // `from` names the problem instead of repeating the text that cannot be stored.
    draft.set(
      'STORABLE_TEXT',
      'reasoning',
      storableText(raw.reasoning),
      'text with U+0000 or lone surrogates',
    );
  }
  const c = raw.confidenceScore;
  const clamped = typeof c === 'number' && !Number.isNaN(c) ? Math.min(1, Math.max(0, c)) : 0;
  if (clamped !== c) draft.set('CONFIDENCE_CLAMP', 'confidenceScore', clamped, c);
}

function applyRules(draft: Draft, request: TriageRequest, s: RiskSignals): void {
  const floor = SSVC_FLOOR[s.decision];
  if (floor.minPriority !== null) draft.raisePriority('SSVC_FLOOR', floor.minPriority);
  draft.requireAction('SSVC_FLOOR', floor.allowed, floor.action);

  if (s.kev) draft.raisePriority('KEV_FLOOR', 'HIGH');
  if (s.kev && s.internetExposed) {
    draft.raisePriority('KEV_EXPOSED', 'CRITICAL');
    if (draft.answer.recommendedAction !== 'PATCH_IMMEDIATELY') {
      draft.set('KEV_EXPOSED', 'recommendedAction', 'PATCH_IMMEDIATELY');
    }
  }
  const exposedSevere =
    s.internetExposed && s.cvssScore !== null && s.cvssScore >= POLICY_THRESHOLDS.exposedCvss;
  const epssHigh = s.maxEpss !== null && s.maxEpss >= POLICY_THRESHOLDS.epss;
  if ((s.kev || epssHigh || exposedSevere) && draft.answer.recommendedAction === 'ACCEPT_RISK') {
    draft.set('NO_ACCEPT_RISK', 'recommendedAction', 'PATCH_SCHEDULED');
  }
  const exposureUnknown = typeof request.asset?.internetExposed !== 'boolean';
  const critical =
    request.severity === 'CRITICAL' ||
    (s.cvssScore !== null && s.cvssScore >= POLICY_THRESHOLDS.unknownCriticalCvss);
  if (exposureUnknown && critical) {
    draft.raisePriority('UNKNOWN_CRITICAL', 'MEDIUM');
    if (draft.answer.recommendedAction === 'ACCEPT_RISK') {
      draft.set('UNKNOWN_CRITICAL', 'recommendedAction', 'PATCH_SCHEDULED');
    }
  }

  const p = draft.answer.priority;
  if (p === 'CRITICAL')
    draft.requireAction(
      'PRIORITY_ACTION_CONSISTENCY',
      ['PATCH_IMMEDIATELY', 'MITIGATE'],
      'PATCH_IMMEDIATELY',
    );
  if (p === 'HIGH') {
    draft.requireAction(
      'PRIORITY_ACTION_CONSISTENCY',
      ['PATCH_IMMEDIATELY', 'MITIGATE', 'PATCH_SCHEDULED', 'INVESTIGATE'],
      'PATCH_SCHEDULED',
    );
  }
  if (draft.answer.recommendedAction === 'PATCH_IMMEDIATELY')
    draft.raisePriority('PRIORITY_ACTION_CONSISTENCY', 'HIGH');

  const override = draft.answer.severityOverride;
  if (s.kev && override !== null && SEVERITY_RANK[override] < SEVERITY_RANK[request.severity]) {
    draft.set('KEV_NO_SEVERITY_DOWNGRADE', 'severityOverride', null);
  }
  if (draft.answer.severityOverride === request.severity)
    draft.set('SEVERITY_OVERRIDE_SAME', 'severityOverride', null);
}

/**
 * Applies the safety policy to an answer. Pure and deterministic: the same inputs give the same
 * output. Each rule that changed something is noted once in `reasoning` as ` [policy:RULE]`.
 */
export function applySafetyPolicy(
  answer: UncheckedAnswer,
  request: TriageRequest,
  enrichment: EnrichmentMap,
): { answer: TriageAnswer; changes: PolicyChange[] } {
  const draft = new Draft({
    priority: answer.priority as Priority,
    recommendedAction: answer.recommendedAction as RecommendedAction,
    reasoning: answer.reasoning as string,
    confidenceScore: answer.confidenceScore as number,
    severityOverride: (answer.severityOverride ?? null) as TriageAnswer['severityOverride'],
  });
  normalise(answer, draft);
  const proposed = { priority: draft.answer.priority, action: draft.answer.recommendedAction };
  const s = deriveSignals(request, enrichment, POLICY_THRESHOLDS.epss);
  applyRules(draft, request, s);
  const rules = [...new Set(draft.changes.map((c) => c.rule))];
  const reasoning =
    draft.answer.reasoning + rules.map((r) => ` [policy:${r}]`).join('') + finalDecision(proposed, draft, s);
  return { answer: { ...draft.answer, reasoning }, changes: draft.changes };
}

/** Why a rule raised the decision, in words (only the rules that can change priority or action). */
const RAISED_BECAUSE: Partial<Record<PolicyRule, (s: RiskSignals) => string>> = {
  SSVC_FLOOR: (s) => `the SSVC decision is ${s.decision}`,
  KEV_FLOOR: () => "a CVE in CISA's Known Exploited Vulnerabilities catalog is never below HIGH",
  KEV_EXPOSED: () => 'a known exploited CVE on an internet-exposed asset must be patched immediately',
  NO_ACCEPT_RISK: () =>
    'the risk of a known exploited, likely exploited or exposed severe flaw cannot be accepted',
  UNKNOWN_CRITICAL: (s) =>
    `a critical finding${s.cvssScore !== null ? ` (CVSS ${s.cvssScore.toFixed(1)})` : ''} whose ` +
    'internet exposure is unknown is never below MEDIUM and its risk cannot be accepted',
  PRIORITY_ACTION_CONSISTENCY: () => 'the action must match the priority',
};

/**
 * When the rules changed the priority or the action, the reasoning above still argues for the
 * proposal (the provider's "recommended: monitor it"): a last sentence states the decision that
 * stands and why the policy changed it. Empty when the decision is the proposal's (an answer
 * the ENUMS rule repaired keeps its own words: there was no valid proposal to contradict).
 */
function finalDecision(
  proposed: { priority: Priority; action: RecommendedAction },
  draft: Draft,
  s: RiskSignals,
): string {
  const { priority, recommendedAction: action } = draft.answer;
  if (priority === proposed.priority && action === proposed.action) return '';
  const why = [
    ...new Set(
      draft.changes
        .filter((c) => c.field === 'priority' || c.field === 'recommendedAction')
        .flatMap((c) => RAISED_BECAUSE[c.rule]?.(s) ?? []),
    ),
  ];
  return (
    ` Final decision: ${priority} priority, ${ACTION_WORDS[action]}; the safety policy changed the ` +
    `proposed ${proposed.priority} priority, ${ACTION_WORDS[proposed.action]}, because ${why.join(', and ')}.`
  );
}

/** Confidence given to an answer formed without any model (less context than a model had). */
export const POLICY_ONLY_CONFIDENCE = 0.5;

/**
 * A safe answer from enrichment alone, for when every provider in the chain failed
 * (served as `policy:ssvc`). Returns `null` when none of the request's CVEs has an enrichment
 * record: with no signal there is nothing to stand on, and the caller answers 503
 * `triage_unavailable` (docs/api.md#errors).
 */
export function policyOnlyAnswer(
  request: TriageRequest,
  enrichment: EnrichmentMap,
): { answer: TriageAnswer; changes: PolicyChange[] } | null {
  const s = deriveSignals(request, enrichment, POLICY_THRESHOLDS.epss);
  if (s.records.length === 0) return null;
  const base = ssvcBaseline(s.decision, request.severity);
  const facts = [
    s.kev ? 'listed in CISA KEV' : 'not in CISA KEV',
    s.maxEpss !== null ? `EPSS ${s.maxEpss.toFixed(3)}` : 'no EPSS score',
    s.cvssScore !== null ? `CVSS ${s.cvssScore.toFixed(1)}` : 'no CVSS score',
  ];
  const reasoning =
    `No model could answer; this is the deterministic SSVC ${s.decision} decision ` +
    `(exploitation ${s.ssvc.exploitation}, automatable ${s.ssvc.automatable}, technical impact ` +
    `${s.ssvc.technicalImpact}, mission impact ${s.ssvc.missionWellbeing}) from ${facts.join(', ')}.`;
  return applySafetyPolicy(
    {
      priority: base.priority,
      recommendedAction: base.action,
      reasoning,
      confidenceScore: POLICY_ONLY_CONFIDENCE,
      severityOverride: null,
    },
    request,
    enrichment,
  );
}
