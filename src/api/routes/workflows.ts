import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorFrom } from './key-management.js';
import type {
  WorkflowInput,
  WorkflowPatchInput,
  WorkflowService,
} from '../../domain/workflows/workflow-service.js';
import { DEFAULT_LIMIT, idParams } from '../schemas/scans.js';
import { createWorkflowBody, listDeliveriesQuery, patchWorkflowBody } from '../schemas/workflows.js';
import { KEY_ROUTE_ERRORS, responses } from '../schemas/responses.js';
import {
  createdWorkflowView,
  deliveryList,
  workflowDeleted,
  workflowList,
  workflowTestView,
  workflowView,
} from '../schemas/workflows-responses.js';

/**
 * Mapped workflows under `/api/v1` (issue 14): `workflows:write` manages them, `scans:read`
 * reads them and their deliveries. Another workspace's ids are 404 like unknown ones. No answer
 * carries a credential; the signing secret only the creation's 201.
 */
export function registerWorkflowRoutes(
  app: FastifyInstance,
  deps: { workflows: { service: WorkflowService } },
): void {
  const svc = deps.workflows.service;
  const read = { scope: 'scans:read' as const };
  const write = { scope: 'workflows:write' as const };
  const id = (req: { params: unknown }) => (req.params as { id: string }).id;
  /** Who changes a workflow, for the audit log: the calling key. */
  const actor = (req: FastifyRequest) => actorFrom(req, `key:${req.apiKey.id}`);

  const errors = KEY_ROUTE_ERRORS;
  const withId = [...KEY_ROUTE_ERRORS, 404];
  app.get(
    '/workflows',
    {
      config: read,
      schema: { summary: 'List workflows', response: responses({ 200: workflowList }, errors) },
    },
    async (req) => ({
      object: 'list',
      data: await svc.list(req.apiKey.workspace.id),
      nextCursor: null,
    }),
  );

  app.post(
    '/workflows',
    {
      config: write,
      bodyLimit: 32 * 1024,
      schema: {
        summary: 'Create a workflow',
        body: createWorkflowBody,
        response: responses({ 201: createdWorkflowView }, [...errors, 413]),
      },
    },
    async (req, reply) => {
      const created = await svc.create(req.apiKey.workspace.id, req.body as WorkflowInput, actor(req));
      void reply.code(201).header('Cache-Control', 'no-store');
      return created;
    },
  );

  app.get(
    '/workflows/:id',
    {
      config: read,
      schema: { summary: 'A workflow', params: idParams, response: responses({ 200: workflowView }, withId) },
    },
    async (req) => svc.get(req.apiKey.workspace.id, id(req)),
  );

  app.patch(
    '/workflows/:id',
    {
      config: write,
      bodyLimit: 32 * 1024,
      schema: {
        summary: 'Change or disable a workflow',
        params: idParams,
        body: patchWorkflowBody,
        response: responses({ 200: workflowView }, [...withId, 413]),
      },
    },
    async (req) => svc.update(req.apiKey.workspace.id, id(req), req.body as WorkflowPatchInput, actor(req)),
  );

  app.delete(
    '/workflows/:id',
    {
      config: write,
      schema: {
        summary: 'Delete a workflow',
        params: idParams,
        response: responses({ 204: workflowDeleted }, withId),
      },
    },
    async (req, reply) => {
      await svc.remove(req.apiKey.workspace.id, id(req), actor(req));
      return reply.code(204).send();
    },
  );

  app.post(
    '/workflows/:id/test',
    {
      config: write,
      bodyLimit: 1024,
      schema: {
        summary: 'Send one sample delivery',
        params: idParams,
        response: responses({ 200: workflowTestView }, withId),
      },
    },
    async (req) => svc.test(req.apiKey.workspace.id, id(req)),
  );

  app.get(
    '/workflows/:id/deliveries',
    {
      config: read,
      schema: {
        summary: "A workflow's deliveries",
        params: idParams,
        querystring: listDeliveriesQuery,
        response: responses({ 200: deliveryList }, withId),
      },
    },
    async (req) => {
      const q = req.query as { limit?: number; cursor?: string };
      return svc.deliveries(req.apiKey.workspace.id, id(req), {
        limit: q.limit ?? DEFAULT_LIMIT,
        ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
      });
    },
  );
}
