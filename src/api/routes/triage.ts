import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { batchIdParams, batchItemsQuery, batchRequestBody, triageRequestBody } from '../schemas/triage.js';
import { batchAccepted, batchView, triageAnswer } from '../schemas/triage-responses.js';
import { KEY_ROUTE_ERRORS, responses } from '../schemas/responses.js';
import { typed } from '../typed-app.js';

/** A JSON body can also be too large (413) or not JSON (415). */
const BODY_ROUTE_ERRORS = [...KEY_ROUTE_ERRORS, 413, 415];

function caller(req: FastifyRequest) {
  return {
    workspaceId: req.apiKey.workspace.id,
    keyId: req.apiKey.id,
    requestId: req.id,
    aiCallLimit: req.plan.limits.aiCallsPerMonth,
  };
}

/**
 * `POST /api/v1/triage` (docs/triage.md#request-and-answer), `POST /api/v1/triage/batch` and
 * `GET /api/v1/triage/batch/:id` (docs/triage.md#batch-triage). Bodies are checked by their schemas
 * (`schemas/triage.ts`: every bad field listed, unknown ones refused, a `model` field too); the
 * rules a schema cannot say are the triage service's.
 */
export function triageRoutes(app: FastifyInstance, deps: Pick<AppDeps, 'triage'>): void {
  typed(app).post(
    '/triage',
    {
      config: { scope: 'triage:write' },
      bodyLimit: 64 * 1024,
      schema: {
        summary: 'Triage one finding',
        body: triageRequestBody,
        response: responses({ 200: triageAnswer }, BODY_ROUTE_ERRORS),
      },
    },
    async (req) => deps.triage.triageOne(caller(req), req.body),
  );

  typed(app).post(
    '/triage/batch',
    {
      config: { scope: 'triage:write' },
      bodyLimit: 5 * 1024 * 1024,
      schema: {
        summary: 'Triage many findings as jobs',
        body: batchRequestBody,
        response: responses({ 202: batchAccepted }, BODY_ROUTE_ERRORS),
      },
    },
    async (req, reply) => {
      const { batchId, total } = await deps.triage.acceptBatch(
        {
          ...caller(req),
          batchMaxItems: req.plan.limits.batchMaxItems,
          apiKeySecret: String(req.headers['x-api-key']).trim(),
        },
        req.body,
      );
      const statusUrl = `/api/v1/triage/batch/${batchId}`;
      void reply.code(202).header('Location', statusUrl);
      return { batchId, status: 'queued', total, statusUrl };
    },
  );

  typed(app).get(
    '/triage/batch/:id',
    {
      config: { scope: 'scans:read' },
      schema: {
        summary: 'A batch and a page of its items',
        params: batchIdParams,
        querystring: batchItemsQuery,
        response: responses({ 200: batchView }, [...KEY_ROUTE_ERRORS, 404]),
      },
    },
    async (req) => {
      const { id } = req.params;
      const { cursor, limit = 100 } = req.query;
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
