import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { problemOf } from '../plugins/problem.js';
import { healthResponses, readyResponses } from '../schemas/operations.js';

/** `/healthz`: the process answers. `/readyz`: it can reach its database and queue. */
export function healthRoutes(app: FastifyInstance, deps: Pick<AppDeps, 'readiness'>): void {
  app.get('/healthz', { schema: { summary: 'Liveness', response: healthResponses } }, async () => ({
    status: 'ok',
  }));
  app.get('/readyz', { schema: { summary: 'Readiness', response: readyResponses } }, async (req, reply) => {
    try {
      await deps.readiness();
      return { status: 'ready' };
    } catch (err) {
      req.log.warn({ err: (err as Error).message }, 'not ready');
      return reply
        .code(503)
        .header('Retry-After', '5')
        .type('application/problem+json')
        .send(problemOf('overloaded', 'A dependency (database or queue) cannot be reached.', req.id));
    }
  });
}
