import type { FastifyInstance } from 'fastify';
import type { Queue } from 'bullmq';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { problemOf } from './problem.js';
import { basicPasswordMatches } from '../../lib/secret-compare.js';
import type { QueueKit } from '../../jobs/queue-kit.js';
import { SERVICE_QUEUES } from '../../jobs/service-queues.js';

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/**
 * Bull Board, the operators' view of the queues, at `/admin/queues` behind HTTP basic auth
 * (any user name, ADMIN_TOKEN as the password, compared in constant time). Redis queues only:
 * the board reads BullMQ's Redis structures and the server's INFO, which the PostgreSQL backend
 * does not have, so on that backend it is not mounted (README "Operations").
 */
export async function registerQueueDashboard(
  app: FastifyInstance,
  opts: { queues: QueueKit; adminToken: string },
): Promise<void> {
  if (opts.queues.kind !== 'redis') return;
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    // Redis handles are BullMQ Queue objects (see queue-kit.ts); the kit closes them on shutdown.
    queues: SERVICE_QUEUES.map((name) => new BullMQAdapter(opts.queues.queue(name) as unknown as Queue)),
    serverAdapter,
  });
  await app.register(async (scope) => {
    // Answered here, not thrown: errors inside Bull Board's routes meet its own error handler.
    scope.addHook('onRequest', async (req, reply) => {
      if (basicPasswordMatches(req.headers.authorization, opts.adminToken)) return;
      return reply
        .code(401)
        .header('WWW-Authenticate', 'Basic realm="queues", charset="UTF-8"')
        .type('application/problem+json')
        .send(
          problemOf(
            'unauthenticated',
            "The queue dashboard needs the operators' password (ADMIN_TOKEN).",
            req.id,
          ),
        );
    });
    await scope.register(serverAdapter.registerPlugin(), { prefix: QUEUE_DASHBOARD_PATH });
  });
}
