import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { invalidRequest, notFound } from '../../lib/errors.js';
import type { WorkflowInput, WorkflowPatchInput } from '../../domain/workflows/workflow-service.js';
import { workflowPreview } from '../../domain/workflows/preview.js';
import type { WorkflowFields } from '../../domain/workflows/types.js';
import { DEFAULT_LIMIT, idParams } from '../schemas/scans.js';
import { noQuery } from '../schemas/common.js';
import {
  createWorkflowBody,
  fieldsSchema,
  listDeliveriesQuery,
  patchWorkflowBody,
} from '../schemas/workflows.js';

const previewBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    kind: { type: 'string', enum: ['jira', 'github', 'webhook'] },
    fields: fieldsSchema,
    caseId: { type: 'string', maxLength: 100 },
  },
} as const;

/**
 * Settings > Workflows (issue 16) as JSON: the workflow routes of `/api/v1/workflows` with the
 * session instead of a key (the console user owns the workspace), through the same workflow
 * service, plus a preview of the mapped fields for a sample case while a person edits them.
 */
export function consoleWorkflowRoutes(
  app: FastifyInstance,
  deps: Pick<AppDeps, 'config' | 'pool' | 'workflows'>,
): void {
  const svc = deps.workflows.service;
  const id = (req: { params: unknown }) => (req.params as { id: string }).id;

  app.get('/workflows', { schema: { querystring: noQuery } }, async (req) => ({
    object: 'list',
    data: await svc.list(req.session.workspaceId),
    nextCursor: null,
  }));

  app.post(
    '/workflows',
    { bodyLimit: 32 * 1024, schema: { body: createWorkflowBody } },
    async (req, reply) => {
      const created = await svc.create(req.session.workspaceId, req.body as WorkflowInput);
      return reply.code(201).header('Cache-Control', 'no-store').send(created);
    },
  );

  app.post('/workflows/preview', { bodyLimit: 32 * 1024, schema: { body: previewBody } }, async (req) => {
    const body = req.body as {
      kind?: 'jira' | 'github' | 'webhook';
      fields?: WorkflowFields;
      caseId?: string;
    };
    const preview = await workflowPreview(deps.pool, {
      workspaceId: req.session.workspaceId,
      kind: body.kind ?? 'webhook',
      fields: body.fields ?? {},
      caseId: body.caseId ?? null,
      baseUrl: deps.config.publicBaseUrl,
    });
    if (preview === 'no_case') throw notFound('case');
    if ('errors' in preview) throw invalidRequest(preview.errors);
    return preview;
  });

  app.get('/workflows/:id', { schema: { params: idParams } }, async (req) =>
    svc.get(req.session.workspaceId, id(req)),
  );

  app.patch(
    '/workflows/:id',
    { bodyLimit: 32 * 1024, schema: { params: idParams, body: patchWorkflowBody } },
    async (req) => svc.update(req.session.workspaceId, id(req), req.body as WorkflowPatchInput),
  );

  app.delete('/workflows/:id', { schema: { params: idParams } }, async (req, reply) => {
    await svc.remove(req.session.workspaceId, id(req));
    return reply.code(204).send();
  });

  app.post('/workflows/:id/test', { bodyLimit: 1024, schema: { params: idParams } }, async (req) =>
    svc.test(req.session.workspaceId, id(req)),
  );

  app.get(
    '/workflows/:id/deliveries',
    { schema: { params: idParams, querystring: listDeliveriesQuery } },
    async (req) => {
      const q = req.query as { limit?: number; cursor?: string };
      return svc.deliveries(req.session.workspaceId, id(req), {
        limit: q.limit ?? DEFAULT_LIMIT,
        ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
      });
    },
  );
}
