import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ExportService, ExportStream } from '../../domain/exports/export-service.js';
import type { ExportFormat } from '../../domain/exports/formats.js';
import type { FindingExportFormat } from '../../domain/exports/findings-export.js';
import { invalidRequest, notFound } from '../../lib/errors.js';
import {
  createExportBody,
  downloadQuery,
  exportCasesQuery,
  exportFindingsQuery,
  type CreateExportBody,
  type ExportQuery,
} from '../schemas/exports.js';
import { idParams, listFiltersOf } from '../schemas/scans.js';
import { exportFile, exportView } from '../schemas/exports-responses.js';
import { KEY_ROUTE_ERRORS, PUBLIC_ROUTE_ERRORS, problemResponse, responses } from '../schemas/responses.js';

function send(reply: FastifyReply, s: ExportStream): FastifyReply {
  return reply
    .header('content-type', s.contentType)
    .header('content-disposition', `attachment; filename="${s.filename}"`)
    .header('cache-control', 'no-store')
    .send(s.body);
}

/**
 * Exports under `/api/v1` (issue 13), scope `scans:read`: direct streams of cases (every format)
 * and findings (CSV, JSON Lines), and export jobs with their status. Another workspace's
 * export id is 404 like an unknown one.
 */
export function registerExportRoutes(app: FastifyInstance, deps: { exports: ExportService }): void {
  const read = { scope: 'scans:read' as const };

  app.get(
    '/exports/cases',
    {
      config: read,
      schema: {
        summary: 'Stream cases as CSV, JSON Lines, SARIF or CycloneDX VEX',
        querystring: exportCasesQuery,
        response: responses({ 200: exportFile('cases') }, [...KEY_ROUTE_ERRORS, 413]),
      },
    },
    async (req, reply) => {
      const q = req.query as ExportQuery;
      return send(
        reply,
        await deps.exports.streamCases(req.apiKey.workspace.id, q.format as ExportFormat, listFiltersOf(q)),
      );
    },
  );

  app.get(
    '/exports/findings',
    {
      config: read,
      schema: {
        summary: 'Stream findings as CSV or JSON Lines',
        querystring: exportFindingsQuery,
        response: responses({ 200: exportFile('findings') }, KEY_ROUTE_ERRORS),
      },
    },
    async (req, reply) => {
      const q = req.query as ExportQuery;
      return send(
        reply,
        deps.exports.streamFindings(req.apiKey.workspace.id, q.format as FindingExportFormat, {
          ...listFiltersOf(q),
          ...(q.case !== undefined ? { caseId: q.case } : {}),
        }),
      );
    },
  );

  const createSchema = {
    summary: 'Start an export job',
    body: createExportBody,
    response: responses({ 202: exportView }, [...KEY_ROUTE_ERRORS, 413, 415]),
  };
  app.post('/exports', { config: read, schema: createSchema }, async (req, reply) => {
    const body = req.body as CreateExportBody;
    const subject = body.subject ?? 'cases';
    if (subject === 'findings' && body.format !== 'csv' && body.format !== 'jsonl') {
      // What the schema cannot say: SARIF and VEX describe cases, not single sightings.
      throw invalidRequest([{ path: '/format', message: 'must be csv or jsonl when subject is findings' }]);
    }
    const view = await deps.exports.create({
      workspaceId: req.apiKey.workspace.id,
      keyId: req.apiKey.id,
      subject,
      format: body.format,
      filter: body.filter ?? {},
    });
    return reply.code(202).header('location', view.statusUrl).send(view);
  });

  const statusSchema = {
    summary: 'An export job',
    params: idParams,
    response: responses({ 200: exportView }, [...KEY_ROUTE_ERRORS, 404]),
  };
  app.get('/exports/:id', { config: read, schema: statusSchema }, async (req) => {
    const view = await deps.exports.get(req.apiKey.workspace.id, (req.params as { id: string }).id);
    if (!view) throw notFound('export');
    return view;
  });
}

/**
 * `GET /api/exports/:id/download`: the signed link of a finished export, usable without an API
 * key (the link is the credential). Forged or unknown → 404; past its expiry → 410.
 */
export function registerExportDownloadRoute(app: FastifyInstance, deps: { exports: ExportService }): void {
  app.get(
    '/api/exports/:id/download',
    {
      schema: {
        summary: 'Download a finished export (signed link, no API key)',
        params: idParams,
        querystring: downloadQuery,
        response: responses({ 200: exportFile('cases'), 410: problemResponse(410, 'The link has expired') }, [
          ...PUBLIC_ROUTE_ERRORS,
          404,
        ]),
      },
    },
    async (req, reply) => {
      const file = await deps.exports.download((req.params as { id: string }).id, req.query as object);
      return send(reply.header('content-length', file.bytes), file);
    },
  );
}
