import type { FastifyInstance } from 'fastify';
import { actorFrom } from './key-management.js';
import { invalidRequest, notFound } from '../../lib/errors.js';
import type { WorkflowService } from '../../domain/workflows/workflow-service.js';
import { typed } from '../typed-app.js';
import type { Surface } from './surface.js';
import { DEFAULT_LIMIT, idParams } from '../schemas/scans.js';
import { noQuery } from '../schemas/common.js';
import { responses } from '../schemas/responses.js';
import {
  createWorkflowBody,
  listDeliveriesQuery,
  patchWorkflowBody,
  previewWorkflowBody,
} from '../schemas/workflows.js';
import {
  createdWorkflowView,
  deliveryList,
  workflowDeleted,
  workflowList,
  workflowPreviewView,
  workflowTestView,
  workflowView,
} from '../schemas/workflows-responses.js';

/**
 * Mapped workflows (docs/workflows.md), written once and registered under both surfaces:
 * `workflows:write` manages them on the API, `scans:read` reads them and their deliveries; the
 * console's user owns the workspace, and its editor also previews the mapped fields for a sample
 * case while a person edits them. Another workspace's ids are 404 like unknown ones. No answer
 * carries a credential; the signing secret only the creation's 201.
 */
export function registerWorkflowRoutes(
  app: FastifyInstance,
  deps: { workflows: { service: WorkflowService } },
  surface: Surface,
): void {
  const r = typed(app);
  const svc = deps.workflows.service;
  const read = surface.needs('scans:read');
  const write = surface.needs('workflows:write');
  /** Who changes a workflow, for the audit log: the calling key or the signed-in user. */
  const actor = (req: Parameters<Surface['actorOf']>[0]) => actorFrom(req, surface.actorOf(req));
  const errors = surface.errors;
  const withId = [...errors, 404];

  // The console refuses any query parameter here (a typo is a 400); the API documents none.
  const listSchema = {
    summary: 'List workflows',
    ...(surface.kind === 'console' ? { querystring: noQuery } : {}),
    response: responses({ 200: workflowList }, errors),
  };
  r.get('/workflows', { config: read, schema: listSchema }, async (req) => ({
    object: 'list',
    data: await svc.list(surface.workspaceOf(req)),
    nextCursor: null,
  }));

  const createSchema = {
    summary: 'Create a workflow',
    body: createWorkflowBody,
    response: responses({ 201: createdWorkflowView }, [...errors, 413]),
  };
  r.post('/workflows', { config: write, bodyLimit: 32 * 1024, schema: createSchema }, async (req, reply) => {
    const created = await svc.create(surface.workspaceOf(req), req.body, actor(req));
    return reply.code(201).header('Cache-Control', 'no-store').send(created);
  });

  if (surface.kind === 'console') {
    const previewSchema = {
      summary: 'Preview the mapped fields for a sample case',
      body: previewWorkflowBody,
      response: responses({ 200: workflowPreviewView }, [...withId, 413]),
    };
    r.post(
      '/workflows/preview',
      { config: write, bodyLimit: 32 * 1024, schema: previewSchema },
      async (req) => {
        const preview = await svc.preview({
          workspaceId: surface.workspaceOf(req),
          kind: req.body.kind ?? 'webhook',
          fields: req.body.fields ?? {},
          caseId: req.body.caseId ?? null,
        });
        if (preview === 'no_case') throw notFound('case');
        if ('errors' in preview) throw invalidRequest(preview.errors);
        return preview;
      },
    );
  }

  const getSchema = {
    summary: 'A workflow',
    params: idParams,
    response: responses({ 200: workflowView }, withId),
  };
  r.get('/workflows/:id', { config: read, schema: getSchema }, async (req) =>
    svc.get(surface.workspaceOf(req), req.params.id),
  );

  const patchSchema = {
    summary: 'Change or disable a workflow',
    params: idParams,
    body: patchWorkflowBody,
    response: responses({ 200: workflowView }, [...withId, 413]),
  };
  r.patch('/workflows/:id', { config: write, bodyLimit: 32 * 1024, schema: patchSchema }, async (req) =>
    svc.update(surface.workspaceOf(req), req.params.id, req.body, actor(req)),
  );

  const deleteSchema = {
    summary: 'Delete a workflow',
    params: idParams,
    response: responses({ 204: workflowDeleted }, withId),
  };
  r.delete('/workflows/:id', { config: write, schema: deleteSchema }, async (req, reply) => {
    await svc.remove(surface.workspaceOf(req), req.params.id, actor(req));
    return reply.code(204).send();
  });

  const testSchema = {
    summary: 'Send one sample delivery',
    params: idParams,
    response: responses({ 200: workflowTestView }, withId),
  };
  r.post('/workflows/:id/test', { config: write, bodyLimit: 1024, schema: testSchema }, async (req) =>
    svc.test(surface.workspaceOf(req), req.params.id),
  );

  const deliveriesSchema = {
    summary: "A workflow's deliveries",
    params: idParams,
    querystring: listDeliveriesQuery,
    response: responses({ 200: deliveryList }, withId),
  };
  r.get('/workflows/:id/deliveries', { config: read, schema: deliveriesSchema }, async (req) =>
    svc.deliveries(surface.workspaceOf(req), req.params.id, {
      limit: req.query.limit ?? DEFAULT_LIMIT,
      ...(req.query.cursor !== undefined ? { cursor: req.query.cursor } : {}),
    }),
  );
}
