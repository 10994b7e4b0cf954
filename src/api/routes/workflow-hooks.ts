import type { FastifyInstance } from 'fastify';
import { INBOUND_KINDS, receiveInbound, type InboundDeps } from '../../domain/workflows/inbound.js';
import { targetKind } from '../../domain/workflows/targets/registry.js';
import { hookParams } from '../schemas/workflows.js';
import { PUBLIC_ROUTE_ERRORS, responses } from '../schemas/responses.js';
import { hookReceipt } from '../schemas/workflows-responses.js';
import { typed } from '../typed-app.js';

/** `x-hub-signature-256` as the docs write it: `X-Hub-Signature-256`. */
const headerName = (h: string) =>
  h.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());

/**
 * Inbound tracker webhooks (`/api/hooks/<kind>/:workflowId`, one route for each kind whose
 * registry entry has `inbound`, docs/workflows.md#status-flowing-back): no API key — the
 * workflow's secret signs the raw body, so the body is kept as bytes for the check and parsed
 * only after it. Answers 202 with whether the event changed a case.
 */
export async function registerWorkflowHookRoutes(
  app: FastifyInstance,
  deps: { workflows: { inbound: InboundDeps } },
) {
  await app.register(
    async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
      for (const kind of INBOUND_KINDS) {
        const { label, inbound } = targetKind(kind);
        typed(scope).post(
          `/${kind}/:workflowId`,
          {
            bodyLimit: 1024 * 1024,
            schema: {
              summary: `Inbound ${label} webhook (${headerName(inbound!.signatureHeader)})`,
              params: hookParams,
              response: responses({ 202: hookReceipt }, [...PUBLIC_ROUTE_ERRORS, 401, 413]),
            },
          },
          async (req, reply) => {
            const result = await receiveInbound(deps.workflows.inbound, kind, {
              workflowId: req.params.workflowId,
              headers: req.headers,
              rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
            });
            return reply.code(202).send({ object: 'hook_receipt', ...result });
          },
        );
      }
    },
    { prefix: '/api/hooks' },
  );
}
