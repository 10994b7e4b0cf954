import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { monthOf, nextMonthStart } from '../../domain/plans/plans.js';
import { workspaceSummary } from '../../domain/workspaces/workspace-summary.js';
import { monthlyStatement } from '../../domain/usage/usage-report.js';
import { listAuditEvents, type AuditQuery } from '../../domain/keys/audit-log.js';
import { planBody, statementQuery } from '../schemas/console.js';
import { auditEventsQuery } from '../schemas/audit.js';
import { noQuery } from '../schemas/common.js';
import { actorFrom } from './key-management.js';

/**
 * Settings > API keys and Settings > Audit log, as JSON: the workspace summary, plan changes,
 * the monthly statement and the audit log. The console user is the workspace's owner, so the
 * session alone grants what `keys:write` grants on `/api/v1/audit-events` (same filters, same shape).
 */
export function consoleWorkspaceRoutes(
  app: FastifyInstance,
  deps: Pick<AppDeps, 'clock' | 'config' | 'pool' | 'quota' | 'workspaces'>,
): void {
  const summary = (workspaceId: string) =>
    workspaceSummary(
      {
        db: deps.pool,
        workspaces: deps.workspaces,
        quota: deps.quota,
        plans: deps.config.plans,
        clock: deps.clock,
      },
      workspaceId,
    );

  app.get('/workspace', { schema: { querystring: noQuery } }, async (req) =>
    summary(req.session.workspaceId),
  );

  app.post('/plan', { bodyLimit: 4096, schema: { body: planBody } }, async (req) => {
    const { plan } = req.body as { plan: 'free' | 'service' };
    await deps.workspaces.changePlan({
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

  app.get('/audit-events', { schema: { querystring: auditEventsQuery } }, async (req, reply) => {
    const page = await listAuditEvents(deps.pool, req.session.workspaceId, req.query as AuditQuery);
    void reply.header('Cache-Control', 'no-store');
    return { object: 'list', data: page.data, nextCursor: page.nextCursor };
  });
}
