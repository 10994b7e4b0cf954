import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { AppError } from '../../lib/errors.js';
import type { DeletionRecord } from '../../domain/workspaces/workspace-deletion.js';
import { clearSessionCookie, requireRole } from '../plugins/console-session.js';
import { noQuery } from '../schemas/common.js';
import {
  deletionBody,
  deletionParams,
  deletionView,
  archiveFile,
  retentionBody,
  retentionView,
  workspaceParams,
} from '../schemas/workspace-deletion.js';
import { PUBLIC_ROUTE_ERRORS, SESSION_ROUTE_ERRORS, responses } from '../schemas/responses.js';
import { actorFrom } from './key-management.js';
import { typed } from '../typed-app.js';

const statusUrl = (id: string) => `/api/console/workspace-deletions/${id}`;

function view(d: DeletionRecord) {
  return {
    id: d.id,
    workspaceId: d.workspaceId,
    status: d.finishedAt ? 'finished' : 'pending',
    requestedAt: d.requestedAt.toISOString(),
    finishedAt: d.finishedAt?.toISOString() ?? null,
    scansRemoved: d.scansRemoved,
    filesRemoved: d.filesRemoved,
    statusUrl: statusUrl(d.id),
  };
}

/**
 * Settings > Data: the workspace archive (docs/operations.md#workspace-archive), streamed.
 * Settings > Data (docs/operations.md#retention): the scan file retention, read and set.
 * Settings > Delete workspace (docs/operations.md#end-of-life): the owner's request, answered
 * 202 with the deletion's status resource, and that resource. The request ends every session of
 * the workspace, this one's too, so the status resource needs none: its id is a random UUID
 * handed only to the requester, and it shows no name, only the removal's progress.
 */
export function consoleWorkspaceDeletionRoutes(
  untyped: FastifyInstance,
  deps: Pick<AppDeps, 'config' | 'retention' | 'workspaceArchive' | 'workspaceDeletions'>,
): void {
  const app = typed(untyped);
  app.get(
    '/workspace/archive',
    {
      config: requireRole('owner'),
      schema: {
        summary: "The workspace's records as one archive (owner only)",
        querystring: noQuery,
        response: responses({ 200: archiveFile }, SESSION_ROUTE_ERRORS),
      },
    },
    async (req, reply) => {
      const archive = await deps.workspaceArchive.build(req.session);
      return reply
        .header('content-type', 'application/gzip')
        .header('content-disposition', `attachment; filename="${archive.fileName}"`)
        .header('cache-control', 'no-store')
        .send(archive.body);
    },
  );

  app.get(
    '/workspace/retention',
    {
      schema: {
        summary: "The workspace's retention settings",
        querystring: noQuery,
        response: responses({ 200: retentionView }, SESSION_ROUTE_ERRORS),
      },
    },
    async (req) => deps.retention.get(req.session.workspaceId),
  );

  app.put(
    '/workspace/retention',
    {
      config: requireRole('owner'),
      bodyLimit: 4096,
      schema: {
        summary: 'Set how long raw scan files are kept (owner only)',
        body: retentionBody,
        response: responses({ 200: retentionView }, [...SESSION_ROUTE_ERRORS, 413, 415]),
      },
    },
    async (req) =>
      deps.retention.set({
        session: req.session,
        scanFileRetentionDays: req.body.scanFileRetentionDays,
        actor: actorFrom(req, `user:${req.session.userId}`),
      }),
  );

  app.post(
    '/workspaces/:workspaceId/deletion',
    {
      config: requireRole('owner'),
      bodyLimit: 4096,
      schema: {
        summary: 'Delete the workspace (owner only, after typing its name)',
        params: workspaceParams,
        body: deletionBody,
        response: responses({ 202: deletionView }, [...SESSION_ROUTE_ERRORS, 404, 413, 415, 422]),
      },
    },
    async (req, reply) => {
      const record = await deps.workspaceDeletions.request({
        workspaceId: req.params.workspaceId,
        session: req.session,
        confirmName: req.body.confirmName,
        actor: actorFrom(req, `user:${req.session.userId}`),
      });
      clearSessionCookie(reply, deps.config.cookieSecure);
      void reply.header('Location', statusUrl(record.id)).header('Cache-Control', 'no-store');
      return reply.code(202).send(view(record));
    },
  );

  app.get(
    '/workspace-deletions/:id',
    {
      config: { public: true },
      schema: {
        summary: "A workspace deletion's status",
        params: deletionParams,
        querystring: noQuery,
        response: responses({ 200: deletionView }, [...PUBLIC_ROUTE_ERRORS, 404]),
      },
    },
    async (req, reply) => {
      const record = await deps.workspaceDeletions.status(req.params.id);
      if (!record) throw new AppError('not_found', 'No such workspace deletion.');
      void reply.header('Cache-Control', 'no-store');
      return view(record);
    },
  );
}
