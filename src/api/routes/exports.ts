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
    { config: read, schema: { querystring: exportCasesQuery } },
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
    { config: read, schema: { querystring: exportFindingsQuery } },
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

  app.post('/exports', { config: read, schema: { body: createExportBody } }, async (req, reply) => {
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

  app.get('/exports/:id', { config: read, schema: { params: idParams } }, async (req) => {
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
    { schema: { params: idParams, querystring: downloadQuery } },
    async (req, reply) => {
      const file = await deps.exports.download((req.params as { id: string }).id, req.query as object);
      return send(reply.header('content-length', file.bytes), file);
    },
  );
}
