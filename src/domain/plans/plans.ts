import type { PlanLimits } from '../../lib/config.js';
import type { PlanName } from '../../db/entities/index.js';

/** What a workspace is entitled to at a moment (docs/console.md#sign-up-and-api-keys). */
export interface EffectivePlan {
  /** The plan shown to the user: `trial` while the trial runs, `free` after it. */
  plan: PlanName;
  limits: PlanLimits;
  /** Whole days left in the trial, rounded up; null when not on a trial. */
  trialDaysLeft: number | null;
  trialEndsAt: Date | null;
}

export interface PlanCatalog {
  free: PlanLimits;
  service: PlanLimits;
}

/**
 * A trial is the service plan until `trialEndsAt`, then the free plan by itself: the
 * switch is computed from the clock, so no job has to run for it to happen on time.
 */
export function effectivePlan(
  workspace: { plan: PlanName; trialEndsAt: Date | null },
  plans: PlanCatalog,
  now: Date,
): EffectivePlan {
  if (workspace.plan === 'service')
    return { plan: 'service', limits: plans.service, trialDaysLeft: null, trialEndsAt: null };
  if (
    workspace.plan === 'trial' &&
    workspace.trialEndsAt &&
    workspace.trialEndsAt.getTime() > now.getTime()
  ) {
    const daysLeft = Math.ceil((workspace.trialEndsAt.getTime() - now.getTime()) / 86_400_000);
    return {
      plan: 'trial',
      limits: plans.service,
      trialDaysLeft: daysLeft,
      trialEndsAt: workspace.trialEndsAt,
    };
  }
  return {
    plan: 'free',
    limits: plans.free,
    trialDaysLeft: workspace.plan === 'trial' ? 0 : null,
    trialEndsAt: workspace.trialEndsAt,
  };
}

/** The first day of the calendar month (UTC) containing `now`, as YYYY-MM-01. */
export function monthOf(now: Date): string {
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01`;
}

/** The first instant of the next calendar month (UTC): when the monthly quota resets. */
export function nextMonthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}
