import type { Db } from '../../db/pool.js';
import { effectivePlan, monthOf, nextMonthStart, type PlanCatalog } from '../plans/plans.js';
import { countLiveKeys } from '../keys/keys-store.js';
import { microsToUsd, picosToMicros } from '../usage/ledger.js';
import type { QuotaService } from '../usage/quota.js';
import { workspaceLedgerTotals } from '../usage/usage-report-store.js';
import type { WorkspaceService } from './workspace-service.js';

/** What {@link workspaceSummary} reads from. */
export interface WorkspaceSummaryDeps {
  db: Db;
  workspaces: Pick<WorkspaceService, 'workspaceOf'>;
  quota: Pick<QuotaService, 'usage'>;
  plans: PlanCatalog;
  clock: () => Date;
}

/**
 * The console's workspace card (Settings > API keys): plan and trial, active (and rotating) keys, tokens of
 * all time, this month's model calls against the plan's limit and this month's spend.
 */
export async function workspaceSummary(deps: WorkspaceSummaryDeps, workspaceId: string) {
  const now = deps.clock();
  const ws = await deps.workspaces.workspaceOf(workspaceId);
  const plan = effectivePlan(ws, deps.plans, now);
  const [liveKeys, ledger, quota] = await Promise.all([
    countLiveKeys(deps.db, workspaceId, now),
    workspaceLedgerTotals(deps.db, workspaceId, monthOf(now)),
    deps.quota.usage(workspaceId),
  ]);
  return {
    id: ws.id,
    name: ws.name,
    plan: plan.plan,
    trialDaysLeft: plan.trialDaysLeft,
    trialEndsAt: plan.trialEndsAt?.toISOString() ?? null,
    status: ws.status,
    rotationPolicyDays: ws.rotationPolicyDays,
    /** Keys in state `active` only; keys in their rotation grace are `rotatingKeys`. */
    activeKeys: liveKeys.active,
    rotatingKeys: liveKeys.rotating,
    tokenUsageTotal: ledger.tokens,
    aiCallsThisMonth: quota.used,
    aiCallLimit: plan.limits.aiCallsPerMonth,
    spendThisMonthUsd: microsToUsd(picosToMicros(ledger.spendPicos)),
    limits: plan.limits,
    monthResetsAt: nextMonthStart(now).toISOString(),
  };
}

/** The workspace card as a service bound once to its readers, so the HTTP edge never sees the pool. */
export interface WorkspaceSummaries {
  /** The card of one workspace ({@link workspaceSummary}). */
  of(workspaceId: string): ReturnType<typeof workspaceSummary>;
}

/** {@link WorkspaceSummaries} over `deps`: plain delegation. */
export function createWorkspaceSummaries(deps: WorkspaceSummaryDeps): WorkspaceSummaries {
  return { of: (workspaceId) => workspaceSummary(deps, workspaceId) };
}
