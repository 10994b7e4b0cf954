import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { monthOf, nextMonthStart } from '../../domain/plans/plans.js';
import { planBody, statementQuery } from '../schemas/console.js';
import { auditEventsQuery } from '../schemas/audit.js';
import { noQuery } from '../schemas/common.js';
import { statementView, workspaceView } from '../schemas/console-responses.js';
import { auditEventList } from '../schemas/keys-responses.js';
import { SESSION_ROUTE_ERRORS, responses } from '../schemas/responses.js';
import { actorFrom } from './key-management.js';
import { typed } from '../typed-app.js';
import { requireRole } from '../plugins/console-session.js';

/**
 * Settings > API keys and Settings > Audit log, as JSON: the workspace summary, plan changes,
 * the monthly statement and the audit log. Anyone of the workspace reads the card and the
 * statement; the plan is the owner's, and the audit log an admin's, as `keys:write` grants it on
 * `/api/v1/audit-events` (same filters, same shape): docs/console.md#members-and-roles.
 */
export function consoleWorkspaceRoutes(
  app: FastifyInstance,
  deps: Pick<AppDeps, 'audit' | 'clock' | 'usageReports' | 'workspaceSummary' | 'workspaces'>,
): void {
  const summary = (workspaceId: string) => deps.workspaceSummary.of(workspaceId);

  const workspaceSchema = {
    summary: 'The workspace card',
    querystring: noQuery,
    response: responses({ 200: workspaceView }, SESSION_ROUTE_ERRORS),
  };
  typed(app).get('/workspace', { config: requireRole('viewer'), schema: workspaceSchema }, async (req) =>
    summary(req.session.workspaceId),
  );

  const planSchema = {
    summary: 'Change the plan',
    body: planBody,
    response: responses({ 200: workspaceView }, [...SESSION_ROUTE_ERRORS, 413, 415]),
  };
  typed(app).post(
    '/plan',
    { config: requireRole('owner'), bodyLimit: 4096, schema: planSchema },
    async (req) => {
      const { plan } = req.body;
      await deps.workspaces.changePlan({
        workspaceId: req.session.workspaceId,
        plan,
        actor: actorFrom(req, `user:${req.session.userId}`),
      });
      return summary(req.session.workspaceId);
    },
  );

  const statementSchema = {
    summary: 'The monthly statement',
    querystring: statementQuery,
    response: responses({ 200: statementView }, SESSION_ROUTE_ERRORS),
  };
  typed(app).get('/statement', { config: requireRole('viewer'), schema: statementSchema }, async (req) => {
    const now = deps.clock();
    const month = req.query.month ?? monthOf(now).slice(0, 7);
    const from = new Date(`${month}-01T00:00:00Z`);
    const to = nextMonthStart(from);
    const { lines, totals } = await deps.usageReports.monthlyStatement(req.session.workspaceId, from, to);
    return {
      month,
      lines,
      totals: { aiCalls: totals.aiCalls, tokens: totals.tokens, spendUsd: totals.spendUsd },
    };
  });

  const auditSchema = {
    summary: "The workspace's audit log",
    querystring: auditEventsQuery,
    response: responses({ 200: auditEventList }, SESSION_ROUTE_ERRORS),
  };
  typed(app).get(
    '/audit-events',
    { config: requireRole('admin'), schema: auditSchema },
    async (req, reply) => {
      const page = await deps.audit.list(req.session.workspaceId, req.query);
      void reply.header('Cache-Control', 'no-store');
      return { object: 'list', data: page.data, nextCursor: page.nextCursor };
    },
  );
}
