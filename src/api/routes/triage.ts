import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { invalidRequest, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { encodeCursor, seqCursor } from '../../lib/cursor.js';
import { checkBatchRequest } from '../../domain/triage/batch-schema.js';
import { checkTriageRequest } from '../../domain/triage-engine/request-schema.js';
import { sealSecret } from '../../domain/keys/key-secrets.js';
import { createBatch, findBatch, itemsPage } from '../../domain/triage/batches.js';
import { webhookSigningKey } from '../../domain/triage/webhook.js';
import { enqueueBatchItems } from '../../jobs/triage-batch.js';

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
 * `GET /api/v1/triage/batch/:id` (DECISIONS §7). Bodies are checked by the pure checkers of
 * the triage domain, which list every bad field and reject unknown ones (a `model` field too).
 */
export function triageRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.post('/triage', { config: { scope: 'triage:write' }, bodyLimit: 64 * 1024 }, async (req) => {
    const checked = checkTriageRequest(req.body);
    if (!checked.ok) throw invalidRequest(checked.errors);
    return deps.triage.triageOne(caller(req), checked.value);
  });

  app.post(
    '/triage/batch',
    { config: { scope: 'triage:write' }, bodyLimit: 5 * 1024 * 1024 },
    async (req, reply) => {
      const maxItems = req.plan.limits.batchMaxItems;
      const checked = checkBatchRequest(req.body, {
        maxItems,
        allowLoopbackHttp: deps.config.webhookAllowLoopbackHttp,
        allowPrivateHosts: deps.config.webhookAllowPrivateHosts,
      });
      if (!checked.ok) throw invalidRequest(checked.errors);
      const { items, webhookUrl } = checked.value;
      await deps.triage.checkBatch(items);
      const c = caller(req);
      const reserved = await deps.quota.reserve(c.workspaceId, items.length, c.aiCallLimit, 24 * 3_600_000);
      if (!reserved.ok) throw deps.triage.quotaError(c.aiCallLimit);
      const batchId = randomUUID();
      try {
        const secret = String(req.headers['x-api-key']).trim();
        await createBatch(deps.pool, {
          id: batchId,
          workspaceId: c.workspaceId,
          keyId: c.keyId,
          items,
          reservationId: reserved.reservation.id,
          webhookUrl: webhookUrl ?? null,
          webhookKeySealed: webhookUrl ? sealSecret(deps.pepper, webhookSigningKey(secret, batchId)) : null,
          at: deps.clock(),
        });
        await enqueueBatchItems(deps.queues, batchId, items.length, deps.config.batchItemRetry);
      } catch (err) {
        await deps.quota.release(reserved.reservation.id).catch(() => undefined);
        await deps.pool.query(`DELETE FROM triage_batches WHERE id = $1`, [batchId]).catch(() => undefined);
        throw err;
      }
      void reply.code(202).header('Location', `/api/v1/triage/batch/${batchId}`);
      return { batchId, status: 'queued', total: items.length, statusUrl: `/api/v1/triage/batch/${batchId}` };
    },
  );

  app.get(
    '/triage/batch/:id',
    {
      config: { scope: 'scans:read' },
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            cursor: { type: 'string', maxLength: 40 },
            limit: { type: 'integer', minimum: 1, maximum: 500 },
          },
        },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      const { cursor, limit = 100 } = req.query as { cursor?: string; limit?: number };
      const batch = isUuid(id) ? await findBatch(deps.pool, req.apiKey.workspace.id, id) : null;
      if (!batch) throw notFound('batch');
      const after = cursor === undefined ? -1 : Number(seqCursor(cursor));
      const items = await itemsPage(deps.pool, id, after, limit);
      const last = items.at(-1);
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
        nextCursor: last && last.index < batch.total - 1 ? encodeCursor({ s: String(last.index) }) : null,
      };
    },
  );
}
