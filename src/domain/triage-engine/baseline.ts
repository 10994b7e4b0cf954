/**
 * Orderings of the triage scales and the SSVC baseline answer shared by the safety policy's
 * fallback (`policy:ssvc`) and the local engine, so both agree on what a decision means.
 */
import type { SsvcDecision } from './ssvc.js';
import type { Priority, RecommendedAction, Severity } from './types.js';

/** INFO 0 … CRITICAL 4: a higher rank is more urgent. */
export const SEVERITY_RANK: Record<Severity, number> = { INFO: 0, LOW: 1, MEDIUM: 2, HIGH: 3, CRITICAL: 4 };

/**
 * Urgency of an action, used to state "never lowers risk": accepting the risk is the least
 * urgent, an immediate patch the most; mitigating now outranks patching on schedule.
 */
export const ACTION_RANK: Record<RecommendedAction, number> = {
  ACCEPT_RISK: 0,
  MONITOR: 1,
  INVESTIGATE: 2,
  PATCH_SCHEDULED: 3,
  MITIGATE: 4,
  PATCH_IMMEDIATELY: 5,
};

/** Each action in words, as the reasoning states it ("recommended: patch immediately"). */
export const ACTION_WORDS: Record<RecommendedAction, string> = {
  PATCH_IMMEDIATELY: 'patch immediately',
  PATCH_SCHEDULED: 'patch in the next scheduled window',
  MITIGATE: 'mitigate now',
  MONITOR: 'monitor it for new exploitation evidence',
  INVESTIGATE: 'investigate further',
  ACCEPT_RISK: 'accept the risk',
};

/** The more severe of two values on the severity scale. */
export function maxSeverity(a: Severity, b: Severity): Severity {
  return SEVERITY_RANK[a] >= SEVERITY_RANK[b] ? a : b;
}

/** What CISA's guide asks for each decision (Act: as soon as possible; Attend: sooner than usual). */
export const SSVC_BASELINE: Record<SsvcDecision, { priority: Priority; action: RecommendedAction }> = {
  Act: { priority: 'CRITICAL', action: 'PATCH_IMMEDIATELY' },
  Attend: { priority: 'HIGH', action: 'PATCH_SCHEDULED' },
  'Track*': { priority: 'MEDIUM', action: 'MONITOR' },
  Track: { priority: 'LOW', action: 'MONITOR' },
};

/** Action that matches a priority when nothing else says otherwise. */
export const DEFAULT_ACTION_FOR_PRIORITY: Record<Priority, RecommendedAction> = {
  CRITICAL: 'PATCH_IMMEDIATELY',
  HIGH: 'PATCH_SCHEDULED',
  MEDIUM: 'PATCH_SCHEDULED',
  LOW: 'MONITOR',
  INFO: 'MONITOR',
};

/**
 * Baseline answer: the SSVC decision's priority, raised to the submitted severity (the scanner's
 * word is not discarded without a model to argue otherwise), with the action matching it.
 */
export function ssvcBaseline(
  decision: SsvcDecision,
  submitted: Severity,
): { priority: Priority; action: RecommendedAction } {
  const base = SSVC_BASELINE[decision];
  const priority = maxSeverity(base.priority, submitted);
  const fromPriority = DEFAULT_ACTION_FOR_PRIORITY[priority];
  const action = ACTION_RANK[fromPriority] > ACTION_RANK[base.action] ? fromPriority : base.action;
  return { priority, action };
}
