import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { notFound } from '../../lib/errors.js';
import { viewCase, viewCaseDetail, viewEvidence, viewFinding } from '../../domain/cases/case-views.js';
import { typed } from '../typed-app.js';
import type { Surface } from './surface.js';
import {
  DEFAULT_LIMIT,
  idParams,
  listCasesQuery,
  listEvidenceQuery,
  listFindingsQuery,
  listTriageHistoryQuery,
  patchCaseBody,
  listFiltersOf,
} from '../schemas/scans.js';
import { consoleCasesQuery } from '../schemas/console-data.js';
import {
  caseDetail as caseDetailSchema,
  caseTriageHistoryList,
  caseList,
  evidenceList,
  findingList,
  findingView,
} from '../schemas/scans-responses.js';
import { caseCounts, consoleCaseDetail } from '../schemas/console-responses.js';
import { responses } from '../schemas/responses.js';

/**
 * What each surface shows of a case. The console's case page wants the CVEs' enrichment and a
 * shorter first page of evidence and history (its page fetches more on demand); the API gives
 * the service's defaults and documents its answers as its own.
 */
const CASE_VIEWS = {
  api: {
    detailSummary: 'A case with its newest evidence and its history',
    detailSchema: caseDetailSchema,
    evidenceSummary: "All of a case's evidence, page by page",
    casesQuery: listCasesQuery,
    pageSize: DEFAULT_LIMIT,
    depth: undefined,
    enrich: false,
  },
  console: {
    detailSummary: 'A case with its newest evidence, history and enrichment',
    detailSchema: consoleCaseDetail,
    evidenceSummary: "A case's evidence, page by page",
    casesQuery: consoleCasesQuery,
    pageSize: 20,
    depth: 20,
    enrich: true,
  },
} as const;

export type CaseRouteDeps = Pick<
  AppDeps,
  'cases' | 'config' | 'enrichment' | 'kevCatalogLoaded' | 'workflows'
>;

/**
 * Findings and cases, written once and registered under both surfaces: lists
 * with filters, sorts and cursor paging, a case with its detail, its evidence page by page and
 * status changes. The API adds the findings, a case's triage history and the one-case `PATCH`
 * (`cases:write`: an upload-only key can never change a case); the console adds counts by
 * severity and priority (changes of many cases: `case-bulk.ts`). A change tells the workflows
 * whose rule the case matches, recorded in the change's transaction (`domain/cases/case-edit.ts`).
 * Another workspace's ids are 404 like unknown ones.
 */
export function registerCaseRoutes(app: FastifyInstance, deps: CaseRouteDeps, surface: Surface): void {
  const r = typed(app);
  const view = CASE_VIEWS[surface.kind];
  const read = surface.needs('scans:read');
  const withNotFound = [...surface.errors, 404];
  const links = (caseId: string) => deps.workflows.service.links(caseId);

  if (surface.kind === 'api') {
    const findingsSchema = {
      summary: 'List findings',
      querystring: listFindingsQuery,
      response: responses({ 200: findingList }, surface.errors),
    };
    r.get('/findings', { config: read, schema: findingsSchema }, async (req) => {
      const q = req.query;
      const page = await deps.cases.findings(surface.workspaceOf(req), {
        ...listFiltersOf(q),
        caseId: q.case,
        limit: q.limit ?? DEFAULT_LIMIT,
        cursor: q.cursor,
      });
      return { object: 'list', data: page.data.map(viewFinding), nextCursor: page.nextCursor };
    });

    const findingSchema = {
      summary: 'One finding',
      params: idParams,
      response: responses({ 200: findingView }, withNotFound),
    };
    r.get('/findings/:id', { config: read, schema: findingSchema }, async (req) => {
      const finding = await deps.cases.finding(surface.workspaceOf(req), req.params.id);
      if (!finding) throw notFound('finding');
      return viewFinding(finding);
    });
  }

  const casesSchema = {
    summary: 'List cases',
    querystring: view.casesQuery,
    response: responses({ 200: caseList }, surface.errors),
  };
  r.get('/cases', { config: read, schema: casesSchema }, async (req) => {
    const q = req.query;
    const page = await deps.cases.list(surface.workspaceOf(req), {
      ...listFiltersOf(q),
      limit: q.limit ?? DEFAULT_LIMIT,
      cursor: q.cursor,
      sort: q.sort,
    });
    return { object: 'list', data: page.data.map(viewCase), nextCursor: page.nextCursor };
  });

  if (surface.kind === 'console') {
    const countsSchema = {
      summary: 'Cases of the filters by severity and by triage priority',
      querystring: consoleCasesQuery,
      response: responses({ 200: caseCounts }, surface.errors),
    };
    r.get('/cases/counts', { config: read, schema: countsSchema }, async (req) => {
      const counts = await deps.cases.counts(surface.workspaceOf(req), listFiltersOf(req.query));
      return { ...counts, directExportMax: deps.config.exportSyncMaxRows };
    });
  }

  const caseSchema = {
    summary: view.detailSummary,
    params: idParams,
    response: responses({ 200: view.detailSchema }, withNotFound),
  };
  r.get('/cases/:id', { config: read, schema: caseSchema }, async (req) => {
    const workspaceId = surface.workspaceOf(req);
    const c = await deps.cases.get(workspaceId, req.params.id);
    if (!c) throw notFound('case');
    const [detail, enrichment, kevCatalogLoaded, caseLinks] = await Promise.all([
      deps.cases.detailOf(workspaceId, c, view.depth, view.depth),
      view.enrich ? deps.enrichment(c.cveIds) : null,
      view.enrich ? deps.kevCatalogLoaded() : null,
      links(c.id),
    ]);
    return {
      ...viewCaseDetail(c, detail),
      ...(enrichment ? { enrichment: [...enrichment.values()], kevCatalogLoaded } : {}),
      links: caseLinks,
    };
  });

  const evidenceSchema = {
    summary: view.evidenceSummary,
    params: idParams,
    querystring: listEvidenceQuery,
    response: responses({ 200: evidenceList }, withNotFound),
  };
  r.get('/cases/:id/evidence', { config: read, schema: evidenceSchema }, async (req) => {
    const q = req.query;
    const page = await deps.cases.evidence(surface.workspaceOf(req), req.params.id, {
      limit: q.limit ?? view.pageSize,
      cursor: q.cursor,
    });
    if (!page) throw notFound('case');
    return { object: 'list', data: page.data.map(viewEvidence), nextCursor: page.nextCursor };
  });

  if (surface.kind !== 'api') return;

  const historySchema = {
    params: idParams,
    querystring: listTriageHistoryQuery,
    response: responses({ 200: caseTriageHistoryList }, withNotFound),
  };
  r.get('/cases/:id/triage-history', { config: read, schema: historySchema }, async (req) => {
    const q = req.query;
    const page = await deps.cases.triageHistory(surface.workspaceOf(req), req.params.id, {
      limit: q.limit ?? DEFAULT_LIMIT,
      cursor: q.cursor,
    });
    if (!page) throw notFound('case');
    return { object: 'list', data: page.data, nextCursor: page.nextCursor };
  });

  const patchSchema = {
    summary: "Change a case's status, owner or tags, or un-mark a duplicate",
    params: idParams,
    body: patchCaseBody,
    response: responses({ 200: caseDetailSchema }, [...withNotFound, 413, 415, 422]),
  };
  const write = surface.needs('cases:write');
  r.patch('/cases/:id', { config: write, bodyLimit: 16 * 1024, schema: patchSchema }, async (req) => {
    const workspaceId = surface.workspaceOf(req);
    const body = req.body;
    const change = {
      workspaceId,
      caseId: req.params.id,
      note: body.note ?? null,
      actor: surface.actorOf(req),
    };
    if (body.duplicateOf === null && !(await deps.cases.unmarkDuplicate(change))) throw notFound('case');
    const edits = body.status !== undefined || body.assignee !== undefined || body.tags !== undefined;
    const edited = edits
      ? await deps.cases.edit({
          workspaceId,
          caseId: req.params.id,
          actor: change.actor,
          ...(body.status !== undefined ? { status: body.status, note: change.note } : {}),
          ...(body.expiresAt !== undefined ? { expiresAt: body.expiresAt } : {}),
          ...(body.assignee !== undefined ? { assignee: body.assignee } : {}),
          ...(body.tags !== undefined ? { tags: body.tags } : {}),
        })
      : await deps.cases.get(workspaceId, req.params.id).then((c) => c && { case: c, statusChanged: false });
    if (!edited) throw notFound('case');
    const updated = edited.case;
    return {
      ...viewCaseDetail(updated, await deps.cases.detailOf(workspaceId, updated)),
      links: await links(updated.id),
    };
  });
}
