import type { FastifyInstance } from 'fastify';
import { notFound } from '../../lib/errors.js';
import type { CaseService } from '../../domain/cases/case-service.js';
import { viewCase, viewCaseDetail, viewEvidence, viewFinding } from '../../domain/cases/case-views.js';
import {
  DEFAULT_LIMIT,
  idParams,
  listCasesQuery,
  listEvidenceQuery,
  listFindingsQuery,
  listTriageHistoryQuery,
  patchCaseBody,
  listFiltersOf,
  type ListQuery,
  type PatchCaseBody,
} from '../schemas/scans.js';
import {
  caseDetail as caseDetailSchema,
  caseTriageHistoryList,
  caseList,
  evidenceList,
  findingList,
  findingView,
} from '../schemas/scans-responses.js';
import { KEY_ROUTE_ERRORS, responses } from '../schemas/responses.js';

const withNotFound = [...KEY_ROUTE_ERRORS, 404];

/**
 * Findings and cases under `/api/v1` (DECISIONS §10), mounted by `buildApp` in the `/api/v1` scope: lists with filters,
 * sorts and cursor paging, a case with its current triage, newest evidence and histories, all of
 * a case's evidence and triage history page by page, and status changes (`cases:write`). Ids of
 * another workspace are 404 like unknown ones (DECISIONS §2).
 */
/**
 * Mapped workflows as the case routes see them (issue 14): a case's external issues, and the
 * trigger a status change calls. Absent: no links are shown and nothing is triggered.
 */
export interface CaseWorkflowHooks {
  links(caseId: string): Promise<unknown[]>;
  statusChanged(workspaceId: string, caseId: string): Promise<unknown>;
}

export function registerFindingCaseRoutes(
  app: FastifyInstance,
  deps: { cases: CaseService; workflows?: CaseWorkflowHooks },
): void {
  const links = async (caseId: string) => (deps.workflows ? await deps.workflows.links(caseId) : []);
  const read = { scope: 'scans:read' as const };

  const findingsSchema = {
    summary: 'List findings',
    querystring: listFindingsQuery,
    response: responses({ 200: findingList }, KEY_ROUTE_ERRORS),
  };
  app.get('/findings', { config: read, schema: findingsSchema }, async (req) => {
    const q = req.query as ListQuery;
    const page = await deps.cases.findings(req.apiKey.workspace.id, {
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
  app.get('/findings/:id', { config: read, schema: findingSchema }, async (req) => {
    const finding = await deps.cases.finding(req.apiKey.workspace.id, (req.params as { id: string }).id);
    if (!finding) throw notFound('finding');
    return viewFinding(finding);
  });

  const casesSchema = {
    summary: 'List cases',
    querystring: listCasesQuery,
    response: responses({ 200: caseList }, KEY_ROUTE_ERRORS),
  };
  app.get('/cases', { config: read, schema: casesSchema }, async (req) => {
    const q = req.query as ListQuery;
    const page = await deps.cases.list(req.apiKey.workspace.id, {
      ...listFiltersOf(q),
      limit: q.limit ?? DEFAULT_LIMIT,
      cursor: q.cursor,
      sort: q.sort,
    });
    return { object: 'list', data: page.data.map(viewCase), nextCursor: page.nextCursor };
  });

  const caseSchema = {
    summary: 'A case with its newest evidence and its history',
    params: idParams,
    response: responses({ 200: caseDetailSchema }, withNotFound),
  };
  app.get('/cases/:id', { config: read, schema: caseSchema }, async (req) => {
    const found = await deps.cases.detail(req.apiKey.workspace.id, (req.params as { id: string }).id);
    if (!found) throw notFound('case');
    return { ...viewCaseDetail(found.case, found.detail), links: await links(found.case.id) };
  });

  app.get(
    '/cases/:id/evidence',
    {
      config: read,
      schema: {
        summary: "All of a case's evidence, page by page",
        params: idParams,
        querystring: listEvidenceQuery,
        response: responses({ 200: evidenceList }, withNotFound),
      },
    },
    async (req) => {
      const q = req.query as ListQuery;
      const page = await deps.cases.evidence(req.apiKey.workspace.id, (req.params as { id: string }).id, {
        limit: q.limit ?? DEFAULT_LIMIT,
        cursor: q.cursor,
      });
      if (!page) throw notFound('case');
      return { object: 'list', data: page.data.map(viewEvidence), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/cases/:id/triage-history',
    {
      config: read,
      schema: {
        params: idParams,
        querystring: listTriageHistoryQuery,
        response: responses({ 200: caseTriageHistoryList }, withNotFound),
      },
    },
    async (req) => {
      const q = req.query as ListQuery;
      const page = await deps.cases.triageHistory(
        req.apiKey.workspace.id,
        (req.params as { id: string }).id,
        {
          limit: q.limit ?? DEFAULT_LIMIT,
          cursor: q.cursor,
        },
      );
      if (!page) throw notFound('case');
      return { object: 'list', data: page.data, nextCursor: page.nextCursor };
    },
  );

  app.patch(
    '/cases/:id',
    {
      // An upload-only key (scans:write) can never change a case (DECISIONS §4).
      config: { scope: 'cases:write' },
      bodyLimit: 16 * 1024,
      schema: {
        summary: "Change a case's status",
        params: idParams,
        body: patchCaseBody,
        response: responses({ 200: caseDetailSchema }, [...withNotFound, 413, 415]),
      },
    },
    async (req) => {
      const body = req.body as PatchCaseBody;
      const updated = await deps.cases.changeStatus({
        workspaceId: req.apiKey.workspace.id,
        caseId: (req.params as { id: string }).id,
        status: body.status,
        note: body.note ?? null,
        actor: `key:${req.apiKey.id}`,
      });
      if (!updated) throw notFound('case');
      await deps.workflows?.statusChanged(updated.workspaceId, updated.id);
      return {
        ...viewCaseDetail(updated, await deps.cases.detailOf(updated)),
        links: await links(updated.id),
      };
    },
  );
}
