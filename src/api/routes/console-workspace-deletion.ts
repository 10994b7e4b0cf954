import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { AppError } from '../../lib/errors.js';
import type { DeletionRecord } from '../../domain/workspaces/workspace-deletion.js';
import { clearSessionCookie } from '../plugins/console-session.js';
import { noQuery } from '../schemas/common.js';
import {
  deletionBody,
  deletionParams,
  deletionView,
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
 * Settings > Delete workspace (docs/operations.md#end-of-life): the owner's request, answered
 * 202 with the deletion's status resource, and that resource. The request ends every session of
 * the workspace, this one's too, so the status resource needs none: its id is a random UUID
 * handed only to the requester, and it shows no name, only the removal's progress.
 */
export function consoleWorkspaceDeletionRoutes(
  untyped: FastifyInstance,
  deps: Pick<AppDeps, 'config' | 'workspaceDeletions'>,
): void {
  const app = typed(untyped);
  app.post(
    '/workspaces/:workspaceId/deletion',
    {
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
