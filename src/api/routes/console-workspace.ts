import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { effectivePlan, monthOf, nextMonthStart } from '../../domain/plans/plans.js';
import { microsToUsd, picosToMicros } from '../../domain/usage/ledger.js';
import { monthlyStatement } from '../../domain/usage/usage-report.js';
import { planBody, statementQuery } from '../schemas/console.js';
import { noQuery } from '../schemas/common.js';
import { actorFrom } from './key-management.js';

/** Settings > API keys, as JSON: the workspace summary, plan changes and the monthly statement. */
export function consoleWorkspaceRoutes(app: FastifyInstance, deps: AppDeps): void {
  async function summary(workspaceId: string) {
    const now = deps.clock();
    const ws = await deps.keys.workspaceOf(deps.orm.em.fork(), workspaceId);
    const plan = effectivePlan(ws, deps.config.plans, now);
    const month = monthOf(now);
    const res = await deps.pool.query<{ active_keys: string; tokens: string; spend: string }>(
      `SELECT (SELECT count(*) FROM api_keys WHERE workspace_id = $1 AND state IN ('active', 'rotating')
                 AND (expires_at IS NULL OR expires_at > $3) AND (grace_ends_at IS NULL OR grace_ends_at > $3))::text AS active_keys,
              (SELECT COALESCE(sum(input_tokens + output_tokens), 0) FROM usage_ledger WHERE workspace_id = $1)::text AS tokens,
              (SELECT COALESCE(sum(cost_picos), 0) FROM usage_ledger WHERE workspace_id = $1 AND created_at >= $2::date)::text AS spend`,
      [workspaceId, month, now],
    );
    const quota = await deps.quota.usage(workspaceId);
    const r = res.rows[0];
    return {
      id: ws.id,
      name: ws.name,
      plan: plan.plan,
      trialDaysLeft: plan.trialDaysLeft,
      trialEndsAt: plan.trialEndsAt?.toISOString() ?? null,
      status: ws.status,
      rotationPolicyDays: ws.rotationPolicyDays,
      activeKeys: Number(r?.active_keys ?? 0),
      tokenUsageTotal: Number(r?.tokens ?? 0),
      aiCallsThisMonth: quota.used,
      aiCallLimit: plan.limits.aiCallsPerMonth,
      spendThisMonthUsd: microsToUsd(picosToMicros(r?.spend ?? '0')),
      limits: plan.limits,
      monthResetsAt: nextMonthStart(now).toISOString(),
    };
  }

  app.get('/workspace', { schema: { querystring: noQuery } }, async (req) =>
    summary(req.session.workspaceId),
  );

  app.post('/plan', { bodyLimit: 4096, schema: { body: planBody } }, async (req) => {
    const { plan } = req.body as { plan: 'free' | 'service' };
    await deps.workspaces.changePlan(deps.orm.em.fork(), {
      workspaceId: req.session.workspaceId,
      plan,
      actor: actorFrom(req, `user:${req.session.userId}`),
    });
    return summary(req.session.workspaceId);
  });

  app.get('/statement', { schema: { querystring: statementQuery } }, async (req) => {
    const now = deps.clock();
    const month = (req.query as { month?: string }).month ?? monthOf(now).slice(0, 7);
    const from = new Date(`${month}-01T00:00:00Z`);
    const to = nextMonthStart(from);
    const { lines, totals } = await monthlyStatement(deps.pool, req.session.workspaceId, from, to);
    return {
      month,
      lines,
      totals: { aiCalls: totals.aiCalls, tokens: totals.tokens, spendUsd: totals.spendUsd },
    };
  });
}
