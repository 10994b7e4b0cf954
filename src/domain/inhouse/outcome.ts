import { SEVERITY_RANK, SSVC_BASELINE } from '../triage-engine/baseline.js';
import type { SsvcDecision } from '../triage-engine/ssvc.js';
import type { Priority, RecommendedAction } from '../triage-engine/types.js';

/**
 * How an SSVC outcome becomes an answer: the same table the local engine and the policy
 * fallback use (`SSVC_BASELINE`), so an in-house answer means what a local one means.
 * Act → CRITICAL/PATCH_IMMEDIATELY, Attend → HIGH/PATCH_SCHEDULED,
 * Track* → MEDIUM/MONITOR, Track → LOW/MONITOR.
 */
export function outcomeAnswer(outcome: SsvcDecision): {
  priority: Priority;
  recommendedAction: RecommendedAction;
} {
  const b = SSVC_BASELINE[outcome];
  return { priority: b.priority, recommendedAction: b.action };
}

/** The answer a KEV finding gets at least (docs/triage.md#safety-policy: KEV never below HIGH). */
export const KEV_FLOOR: { readonly priority: Priority; readonly recommendedAction: RecommendedAction } = {
  priority: 'HIGH',
  recommendedAction: 'PATCH_SCHEDULED',
};

/** True when `a` is strictly less severe than `b`. */
export function priorityBelow(a: Priority, b: Priority): boolean {
  return SEVERITY_RANK[a] < SEVERITY_RANK[b];
}
