import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { BatchTriageRequest } from '../../domain/triage/triage-requests.js';
import type { TriageRequest } from '../../domain/triage-engine/types.js';
import { batchItemsQuery, batchRequestBody, triageRequestBody } from '../schemas/triage.js';

function caller(req: FastifyRequest) {
  return {
    workspaceId: req.apiKey.workspace.id,
    keyId: req.apiKey.id,
    requestId: req.id,
    aiCallLimit: req.plan.limits.aiCallsPerMonth,
  };
}

/**
 * `POST /api/v1/triage` (spec §4.1), `POST /api/v1/triage/batch` and
 * `GET /api/v1/triage/batch/:id` (DECISIONS §7). Bodies are checked by their schemas
 * (`schemas/triage.ts`: every bad field listed, unknown ones refused, a `model` field too); the
 * rules a schema cannot say are the triage service's.
 */
export function triageRoutes(app: FastifyInstance, deps: Pick<AppDeps, 'triage'>): void {
  app.post(
    '/triage',
    { config: { scope: 'triage:write' }, bodyLimit: 64 * 1024, schema: { body: triageRequestBody } },
    async (req) => deps.triage.triageOne(caller(req), req.body as TriageRequest),
  );

  app.post(
    '/triage/batch',
    { config: { scope: 'triage:write' }, bodyLimit: 5 * 1024 * 1024, schema: { body: batchRequestBody } },
    async (req, reply) => {
      const { batchId, total } = await deps.triage.acceptBatch(
        {
          ...caller(req),
          batchMaxItems: req.plan.limits.batchMaxItems,
          apiKeySecret: String(req.headers['x-api-key']).trim(),
        },
        req.body as BatchTriageRequest,
      );
      const statusUrl = `/api/v1/triage/batch/${batchId}`;
      void reply.code(202).header('Location', statusUrl);
      return { batchId, status: 'queued', total, statusUrl };
    },
  );

  app.get(
    '/triage/batch/:id',
    { config: { scope: 'scans:read' }, schema: { querystring: batchItemsQuery } },
    async (req) => {
      const { id } = req.params as { id: string };
      const { cursor, limit = 100 } = req.query as { cursor?: string; limit?: number };
      const found = isUuid(id)
        ? await deps.triage.batchStatus(req.apiKey.workspace.id, id, { cursor, limit })
        : null;
      if (!found) throw notFound('batch');
      const { batch, items, nextCursor } = found;
      return {
        batchId: batch.id,
        status: batch.status,
        total: batch.total,
        completed: batch.completed,
        failed: batch.failed,
        createdAt: batch.createdAt.toISOString(),
        finishedAt: batch.finishedAt?.toISOString() ?? null,
        webhookStatus: batch.webhookStatus,
        items,
        nextCursor,
      };
    },
  );
}
