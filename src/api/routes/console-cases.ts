import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { notFound } from '../../lib/errors.js';
import { monthOf, nextMonthStart } from '../../domain/plans/plans.js';
import { viewCase, viewCaseDetail, viewEvidence } from '../../domain/cases/case-views.js';
import type { ListFilters } from '../../domain/cases/list-filters.js';
import type { ExportStream } from '../../domain/exports/export-service.js';
import type { ExportFormat } from '../../domain/exports/formats.js';
import {
  DEFAULT_LIMIT,
  idParams,
  listEvidenceQuery,
  listFiltersOf,
  type ListQuery,
} from '../schemas/scans.js';
import { exportCasesQuery, type CreateExportBody, type ExportQuery } from '../schemas/exports.js';
import {
  BULK_MAX,
  bulkStatusBody,
  consoleCasesQuery,
  consoleExportBody,
  dashboardQuery,
} from '../schemas/console-data.js';
import {
  bulkStatusResult,
  caseCounts,
  consoleCaseDetail,
  dashboardView,
} from '../schemas/console-responses.js';
import { caseList, evidenceList } from '../schemas/scans-responses.js';
import { exportFile, exportView } from '../schemas/exports-responses.js';
import { SESSION_ROUTE_ERRORS, responses } from '../schemas/responses.js';

const withNotFound = [...SESSION_ROUTE_ERRORS, 404];
const bodyErrors = [...SESSION_ROUTE_ERRORS, 413, 415];

/** A finished export's signed link, as a path on this origin (the console may run under another name). */
function localLink(url: string | null): string | null {
  if (!url) return null;
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

function send(reply: FastifyReply, s: ExportStream): FastifyReply {
  return reply
    .header('content-type', s.contentType)
    .header('content-disposition', `attachment; filename="${s.filename}"`)
    .header('cache-control', 'no-store')
    .send(s.body);
}

/**
 * The Cases, Case and Dashboard pages' JSON (issue 16), over the same domain functions and
 * request schemas as `/api/v1/cases` and `/api/v1/exports`, so a filter means the same here and
 * in the API. The console user is the workspace's owner; status changes are recorded as
 * `user:<id>`. Another workspace's ids are 404 like unknown ones.
 */
export function consoleCaseRoutes(
  app: FastifyInstance,
  deps: Pick<AppDeps, 'cases' | 'clock' | 'config' | 'enrichment' | 'exports' | 'usageReports' | 'workflows'>,
): void {
  app.addHook('onSend', async (_req, reply) => {
    if (!reply.hasHeader('cache-control')) void reply.header('Cache-Control', 'no-store');
  });

  const casesSchema = {
    summary: 'List cases',
    querystring: consoleCasesQuery,
    response: responses({ 200: caseList }, SESSION_ROUTE_ERRORS),
  };
  app.get('/cases', { schema: casesSchema }, async (req) => {
    const q = req.query as ListQuery;
    const page = await deps.cases.list(req.session.workspaceId, {
      ...listFiltersOf(q),
      limit: q.limit ?? DEFAULT_LIMIT,
      cursor: q.cursor,
      sort: q.sort,
    });
    return { object: 'list', data: page.data.map(viewCase), nextCursor: page.nextCursor };
  });

  const countsSchema = {
    summary: 'Cases of the filters by severity and by triage priority',
    querystring: consoleCasesQuery,
    response: responses({ 200: caseCounts }, SESSION_ROUTE_ERRORS),
  };
  app.get('/cases/counts', { schema: countsSchema }, async (req) => {
    const counts = await deps.cases.counts(req.session.workspaceId, listFiltersOf(req.query as ListQuery));
    return { ...counts, directExportMax: deps.config.exportSyncMaxRows };
  });

  const bulkSchema = {
    summary: 'Change the status of many cases',
    body: bulkStatusBody,
    response: responses({ 200: bulkStatusResult }, bodyErrors),
  };
  app.post('/cases/status', { bodyLimit: 64 * 1024, schema: bulkSchema }, async (req) => {
    const body = req.body as {
      status: string;
      note?: string;
      caseIds?: string[];
      filter?: ListFilters;
    };
    const { changedIds, ...counts } = await deps.cases.changeStatusOfMany({
      workspaceId: req.session.workspaceId,
      ...(body.caseIds ? { caseIds: body.caseIds } : { filter: body.filter ?? {} }),
      max: BULK_MAX,
      status: body.status,
      note: body.note?.trim() || null,
      actor: `user:${req.session.userId}`,
    });
    // As a PATCH of each would: the workflows whose rule the cases match hear of it.
    if (changedIds.length > 0) {
      await deps.workflows.trigger.casesChanged(req.session.workspaceId, changedIds, 'case.status_changed');
    }
    return counts;
  });

  const caseSchema = {
    summary: 'A case with its newest evidence, history and enrichment',
    params: idParams,
    response: responses({ 200: consoleCaseDetail }, withNotFound),
  };
  app.get('/cases/:id', { schema: caseSchema }, async (req) => {
    const c = await deps.cases.get(req.session.workspaceId, (req.params as { id: string }).id);
    if (!c) throw notFound('case');
    const [detail, enrichment] = await Promise.all([
      deps.cases.detailOf(c, 20, 20),
      deps.enrichment(c.cveIds),
    ]);
    return {
      ...viewCaseDetail(c, detail),
      enrichment: [...enrichment.values()],
      links: await deps.workflows.service.links(c.id),
    };
  });

  app.get(
    '/cases/:id/evidence',
    {
      schema: {
        summary: "A case's evidence, page by page",
        params: idParams,
        querystring: listEvidenceQuery,
        response: responses({ 200: evidenceList }, withNotFound),
      },
    },
    async (req) => {
      const q = req.query as ListQuery;
      const page = await deps.cases.evidence(req.session.workspaceId, (req.params as { id: string }).id, {
        limit: q.limit ?? 20,
        cursor: q.cursor,
      });
      if (!page) throw notFound('case');
      return { object: 'list', data: page.data.map(viewEvidence), nextCursor: page.nextCursor };
    },
  );

  const exportCasesSchema = {
    summary: 'Stream cases in an export format',
    querystring: exportCasesQuery,
    response: responses({ 200: exportFile('cases') }, [...SESSION_ROUTE_ERRORS, 413]),
  };
  app.get('/exports/cases', { schema: exportCasesSchema }, async (req, reply) => {
    const q = req.query as ExportQuery;
    return send(
      reply,
      await deps.exports.streamCases(req.session.workspaceId, q.format as ExportFormat, listFiltersOf(q)),
    );
  });

  const exportSchema = {
    summary: 'Start an export job',
    body: consoleExportBody,
    response: responses({ 202: exportView }, bodyErrors),
  };
  app.post('/exports', { schema: exportSchema }, async (req, reply) => {
    const body = req.body as CreateExportBody;
    const view = await deps.exports.create({
      workspaceId: req.session.workspaceId,
      keyId: null,
      subject: 'cases',
      format: body.format,
      filter: body.filter ?? {},
    });
    return reply.code(202).send({ ...view, downloadUrl: localLink(view.downloadUrl) });
  });

  const exportStatusSchema = {
    summary: 'An export job',
    params: idParams,
    response: responses({ 200: exportView }, withNotFound),
  };
  app.get('/exports/:id', { schema: exportStatusSchema }, async (req) => {
    const view = await deps.exports.get(req.session.workspaceId, (req.params as { id: string }).id);
    if (!view) throw notFound('export');
    return { ...view, downloadUrl: localLink(view.downloadUrl) };
  });

  const dashboardSchema = {
    summary: 'The dashboard',
    querystring: dashboardQuery,
    response: responses({ 200: dashboardView }, SESSION_ROUTE_ERRORS),
  };
  app.get('/dashboard', { schema: dashboardSchema }, async (req) => {
    const now = deps.clock();
    const from = new Date(`${monthOf(now).slice(0, 7)}-01T00:00:00Z`);
    const [cases, statement] = await Promise.all([
      deps.cases.dashboard(req.session.workspaceId, now, (req.query as { days?: number }).days ?? 30),
      deps.usageReports.monthlyStatement(req.session.workspaceId, from, nextMonthStart(from)),
    ]);
    return { ...cases, aiCallsThisMonth: statement.totals.aiCalls, month: monthOf(now).slice(0, 7) };
  });
}
