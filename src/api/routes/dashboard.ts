import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { monthOf, nextMonthStart } from '../../domain/plans/plans.js';
import { typed } from '../typed-app.js';
import { requireRole } from '../plugins/console-session.js';
import { dashboardQuery } from '../schemas/console-data.js';
import { dashboardView } from '../schemas/console-responses.js';
import { SESSION_ROUTE_ERRORS, responses } from '../schemas/responses.js';

/**
 * The console's dashboard: the workspace's cases over the last `days` days and
 * this month's AI calls. Console only: the API's callers build their own views from the lists.
 */
export function registerDashboardRoute(
  app: FastifyInstance,
  deps: Pick<AppDeps, 'cases' | 'clock' | 'usageReports'>,
): void {
  const schema = {
    summary: 'The dashboard',
    querystring: dashboardQuery,
    response: responses({ 200: dashboardView }, SESSION_ROUTE_ERRORS),
  };
  typed(app).get('/dashboard', { config: requireRole('viewer'), schema }, async (req) => {
    const now = deps.clock();
    const from = new Date(`${monthOf(now).slice(0, 7)}-01T00:00:00Z`);
    const [cases, statement] = await Promise.all([
      deps.cases.dashboard(req.session.workspaceId, now, req.query.days ?? 30),
      deps.usageReports.monthlyStatement(req.session.workspaceId, from, nextMonthStart(from)),
    ]);
    return { ...cases, aiCallsThisMonth: statement.totals.aiCalls, month: monthOf(now).slice(0, 7) };
  });
}
