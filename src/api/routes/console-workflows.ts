import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorFrom } from './key-management.js';
import type { AppDeps } from '../app-deps.js';
import { invalidRequest, notFound } from '../../lib/errors.js';
import type { WorkflowInput, WorkflowPatchInput } from '../../domain/workflows/workflow-service.js';
import type { WorkflowFields } from '../../domain/workflows/types.js';
import { DEFAULT_LIMIT, idParams } from '../schemas/scans.js';
import { noQuery } from '../schemas/common.js';
import { SESSION_ROUTE_ERRORS, responses } from '../schemas/responses.js';
import {
  createdWorkflowView,
  deliveryList,
  workflowDeleted,
  workflowList,
  workflowTestView,
  workflowView,
} from '../schemas/workflows-responses.js';

const errors = SESSION_ROUTE_ERRORS;
const withId = [...SESSION_ROUTE_ERRORS, 404];

/** The preview's answer: the sample case and what the mapping makes of it. */
const workflowPreviewView = {
  description: 'The mapped fields of a workflow for one sample case.',
  type: 'object',
  required: ['case', 'summary', 'labels', 'priority'],
  properties: {
    case: {
      type: 'object',
      required: ['id', 'title'],
      properties: { id: { type: 'string' }, title: { type: 'string' } },
    },
    summary: { type: 'string' },
    labels: { type: 'array', items: { type: 'string' } },
    priority: { type: ['string', 'null'] },
  },
} as const;
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
export function consoleWorkflowRoutes(app: FastifyInstance, deps: Pick<AppDeps, 'workflows'>): void {
  const svc = deps.workflows.service;
  const id = (req: { params: unknown }) => (req.params as { id: string }).id;
  /** Who changes a workflow, for the audit log: the signed-in user. */
  const actor = (req: FastifyRequest) => actorFrom(req, `user:${req.session.userId}`);

  app.get(
    '/workflows',
    {
      schema: {
        summary: 'List workflows',
        querystring: noQuery,
        response: responses({ 200: workflowList }, errors),
      },
    },
    async (req) => ({
      object: 'list',
      data: await svc.list(req.session.workspaceId),
      nextCursor: null,
    }),
  );

  app.post(
    '/workflows',
    {
      bodyLimit: 32 * 1024,
      schema: {
        summary: 'Create a workflow',
        body: createWorkflowBody,
        response: responses({ 201: createdWorkflowView }, [...errors, 413]),
      },
    },
    async (req, reply) => {
      const created = await svc.create(req.session.workspaceId, req.body as WorkflowInput, actor(req));
      return reply.code(201).header('Cache-Control', 'no-store').send(created);
    },
  );

  app.post(
    '/workflows/preview',
    {
      bodyLimit: 32 * 1024,
      schema: {
        summary: 'Preview the mapped fields for a sample case',
        body: previewBody,
        response: responses({ 200: workflowPreviewView }, [...withId, 413]),
      },
    },
    async (req) => {
      const body = req.body as {
        kind?: 'jira' | 'github' | 'webhook';
        fields?: WorkflowFields;
        caseId?: string;
      };
      const preview = await svc.preview({
        workspaceId: req.session.workspaceId,
        kind: body.kind ?? 'webhook',
        fields: body.fields ?? {},
        caseId: body.caseId ?? null,
      });
      if (preview === 'no_case') throw notFound('case');
      if ('errors' in preview) throw invalidRequest(preview.errors);
      return preview;
    },
  );

  app.get(
    '/workflows/:id',
    {
      schema: { summary: 'A workflow', params: idParams, response: responses({ 200: workflowView }, withId) },
    },
    async (req) => svc.get(req.session.workspaceId, id(req)),
  );

  app.patch(
    '/workflows/:id',
    {
      bodyLimit: 32 * 1024,
      schema: {
        summary: 'Change or disable a workflow',
        params: idParams,
        body: patchWorkflowBody,
        response: responses({ 200: workflowView }, [...withId, 413]),
      },
    },
    async (req) => svc.update(req.session.workspaceId, id(req), req.body as WorkflowPatchInput, actor(req)),
  );

  app.delete(
    '/workflows/:id',
    {
      schema: {
        summary: 'Delete a workflow',
        params: idParams,
        response: responses({ 204: workflowDeleted }, withId),
      },
    },
    async (req, reply) => {
      await svc.remove(req.session.workspaceId, id(req), actor(req));
      return reply.code(204).send();
    },
  );

  app.post(
    '/workflows/:id/test',
    {
      bodyLimit: 1024,
      schema: {
        summary: 'Send one sample delivery',
        params: idParams,
        response: responses({ 200: workflowTestView }, withId),
      },
    },
    async (req) => svc.test(req.session.workspaceId, id(req)),
  );

  app.get(
    '/workflows/:id/deliveries',
    {
      schema: {
        summary: "A workflow's deliveries",
        params: idParams,
        querystring: listDeliveriesQuery,
        response: responses({ 200: deliveryList }, withId),
      },
    },
    async (req) => {
      const q = req.query as { limit?: number; cursor?: string };
      return svc.deliveries(req.session.workspaceId, id(req), {
        limit: q.limit ?? DEFAULT_LIMIT,
        ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
      });
    },
  );
}
