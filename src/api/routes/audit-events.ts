import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { auditEventsQuery } from '../schemas/audit.js';
import { auditEventList } from '../schemas/keys-responses.js';
import { KEY_ROUTE_ERRORS, responses } from '../schemas/responses.js';
import { typed } from '../typed-app.js';

/**
 * `GET /api/v1/audit-events` with a `keys:write` key (docs/api.md#audit-log): the workspace's
 * audit log, newest first, `{object: "list", data, nextCursor}`.
 */
export function registerAuditEventRoutes(app: FastifyInstance, deps: Pick<AppDeps, 'audit'>): void {
  typed(app).get(
    '/audit-events',
    {
      config: { scope: 'keys:write' },
      schema: {
        summary: "The workspace's audit log, newest first",
        querystring: auditEventsQuery,
        response: responses({ 200: auditEventList }, KEY_ROUTE_ERRORS),
      },
    },
    async (req, reply) => {
      const page = await deps.audit.list(req.apiKey.workspace.id, req.query);
      // Who did what from where: not for shared caches.
      void reply.header('Cache-Control', 'no-store');
      return { object: 'list', data: page.data, nextCursor: page.nextCursor };
    },
  );
}
