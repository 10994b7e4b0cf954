import type { FastifyInstance } from 'fastify';
import { receiveGithub, receiveJira, type InboundDeps } from '../../domain/workflows/inbound.js';
import { hookParams } from '../schemas/workflows.js';
import { PUBLIC_ROUTE_ERRORS, responses } from '../schemas/responses.js';
import { hookReceipt } from '../schemas/workflows-responses.js';
import { typed } from '../typed-app.js';

/**
 * Inbound Jira and GitHub webhooks (`/api/hooks/{jira,github}/:workflowId`, docs/workflows.md#status-flowing-back): no
 * API key — the workflow's secret signs the raw body, so the body is kept as bytes for the
 * check and parsed only after it. Answers 202 with whether the event changed a case.
 */
export async function registerWorkflowHookRoutes(
  app: FastifyInstance,
  deps: { workflows: { inbound: InboundDeps } },
) {
  await app.register(
    async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
      const schema = (summary: string) => ({
        summary,
        params: hookParams,
        response: responses({ 202: hookReceipt }, [...PUBLIC_ROUTE_ERRORS, 401, 413]),
      });
      const request = (req: {
        params: { workflowId: string };
        headers: Record<string, string | string[] | undefined>;
        body: unknown;
      }) => ({
        workflowId: req.params.workflowId,
        headers: req.headers,
        rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
      });
      typed(scope).post(
        '/jira/:workflowId',
        { bodyLimit: 1024 * 1024, schema: schema('Inbound Jira webhook (X-Hub-Signature)') },
        async (req, reply) => {
          const result = await receiveJira(deps.workflows.inbound, request(req));
          return reply.code(202).send({ object: 'hook_receipt', ...result });
        },
      );
      typed(scope).post(
        '/github/:workflowId',
        { bodyLimit: 1024 * 1024, schema: schema('Inbound GitHub webhook (X-Hub-Signature-256)') },
        async (req, reply) => {
          const result = await receiveGithub(deps.workflows.inbound, request(req));
          return reply.code(202).send({ object: 'hook_receipt', ...result });
        },
      );
    },
    { prefix: '/api/hooks' },
  );
}
