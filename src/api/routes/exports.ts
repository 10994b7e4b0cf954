import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ExportService, ExportStream } from '../../domain/exports/export-service.js';
import { invalidRequest, notFound } from '../../lib/errors.js';
import {
  createExportBody,
  downloadQuery,
  exportCasesQuery,
  exportFindingsQuery,
} from '../schemas/exports.js';
import { typed } from '../typed-app.js';
import type { Surface } from './surface.js';
import { idParams, listFiltersOf } from '../schemas/scans.js';
import { exportFile, exportView } from '../schemas/exports-responses.js';
import { PUBLIC_ROUTE_ERRORS, problemResponse, responses } from '../schemas/responses.js';

function send(reply: FastifyReply, s: ExportStream): FastifyReply {
  return reply
    .header('content-type', s.contentType)
    .header('content-disposition', `attachment; filename="${s.filename}"`)
    .header('cache-control', 'no-store')
    .send(s.body);
}

/** A finished export's signed link, as a path on this origin (the console may run under another name). */
function localLink(url: string | null): string | null {
  if (!url) return null;
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

/**
 * How each surface shows an export job: the API gives its signed link whole and its status URL in
 * `Location`; the console gives the link as a path on its own origin.
 */
const EXPORT_VIEWS = {
  api: {
    casesSummary: 'Stream cases as CSV, JSON Lines, SARIF or CycloneDX VEX',
    link: (url: string | null) => url,
    location: true,
  },
  console: { casesSummary: 'Stream cases in an export format', link: localLink, location: false },
} as const;

/**
 * Exports, written once and registered under both surfaces (`scans:read` on the
 * API): direct streams of cases (every format), export jobs with their status, and on the API
 * direct streams of findings (CSV, JSON Lines). Another workspace's export id is 404 like an
 * unknown one.
 */
export function registerExportRoutes(
  app: FastifyInstance,
  deps: { exports: ExportService },
  surface: Surface,
): void {
  const r = typed(app);
  const view = EXPORT_VIEWS[surface.kind];
  const read = surface.needs('scans:read');

  const casesSchema = {
    summary: view.casesSummary,
    querystring: exportCasesQuery,
    response: responses({ 200: exportFile('cases') }, [...surface.errors, 413]),
  };
  r.get('/exports/cases', { config: read, schema: casesSchema }, async (req, reply) => {
    const q = req.query;
    return send(reply, await deps.exports.streamCases(surface.workspaceOf(req), q.format, listFiltersOf(q)));
  });

  if (surface.kind === 'api') {
    const findingsSchema = {
      summary: 'Stream findings as CSV or JSON Lines',
      querystring: exportFindingsQuery,
      response: responses({ 200: exportFile('findings') }, surface.errors),
    };
    r.get('/exports/findings', { config: read, schema: findingsSchema }, async (req, reply) => {
      const q = req.query;
      return send(
        reply,
        deps.exports.streamFindings(surface.workspaceOf(req), q.format, {
          ...listFiltersOf(q),
          ...(q.case !== undefined ? { caseId: q.case } : {}),
        }),
      );
    });
  }

  const createSchema = {
    summary: 'Start an export job',
    body: createExportBody,
    response: responses({ 202: exportView }, [...surface.errors, 413, 415]),
  };
  r.post('/exports', { config: read, schema: createSchema }, async (req, reply) => {
    const body = req.body;
    const subject = body.subject ?? 'cases';
    if (subject === 'findings' && body.format !== 'csv' && body.format !== 'jsonl') {
      // What the schema cannot say: SARIF and VEX describe cases, not single sightings.
      throw invalidRequest([{ path: '/format', message: 'must be csv or jsonl when subject is findings' }]);
    }
    const created = await deps.exports.create({
      workspaceId: surface.workspaceOf(req),
      keyId: surface.keyOf(req),
      subject,
      format: body.format,
      filter: body.filter ?? {},
    });
    if (view.location) void reply.header('location', created.statusUrl);
    return reply.code(202).send({ ...created, downloadUrl: view.link(created.downloadUrl) });
  });

  const statusSchema = {
    summary: 'An export job',
    params: idParams,
    response: responses({ 200: exportView }, [...surface.errors, 404]),
  };
  r.get('/exports/:id', { config: read, schema: statusSchema }, async (req) => {
    const found = await deps.exports.get(surface.workspaceOf(req), req.params.id);
    if (!found) throw notFound('export');
    return { ...found, downloadUrl: view.link(found.downloadUrl) };
  });
}

/**
 * `GET /api/exports/:id/download`: the signed link of a finished export, usable without an API
 * key (the link is the credential). Forged or unknown → 404; past its expiry → 410.
 */
export function registerExportDownloadRoute(app: FastifyInstance, deps: { exports: ExportService }): void {
  typed(app).get(
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
      const file = await deps.exports.download(req.params.id, req.query);
      return send(reply.header('content-length', file.bytes), file);
    },
  );
}
