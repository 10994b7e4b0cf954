import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { typed } from '../typed-app.js';
import type { Surface } from './surface.js';
import { BULK_MAX, bulkOwnerBody, bulkStatusBody } from '../schemas/console-data.js';
import { bulkOwnerResult, bulkStatusResult } from '../schemas/console-responses.js';
import { responses } from '../schemas/responses.js';

/**
 * Changes of many cases (docs/cases.md#bulk-changes), written once and registered under both
 * surfaces (`cases:write` on the API): a status change, and the owner and tags. Cases are chosen
 * by id or by the list's filters, at most 1,000; ids of another workspace count as not found.
 */
export function registerCaseBulkRoutes(
  app: FastifyInstance,
  deps: Pick<AppDeps, 'cases' | 'workflows'>,
  surface: Surface,
): void {
  const r = typed(app);
  const bodyErrors = [...surface.errors, 413, 415, 422];
  const write = surface.needs('cases:write');
  const bulkSchema = {
    summary: 'Change the status of many cases',
    body: bulkStatusBody,
    response: responses({ 200: bulkStatusResult }, bodyErrors),
  };
  r.post('/cases/status', { config: write, bodyLimit: 64 * 1024, schema: bulkSchema }, async (req) => {
    const body = req.body;
    const workspaceId = surface.workspaceOf(req);
    // The changed ids are what the workflows were told (in each change's transaction), not the answer.
    const { changedIds: _told, ...counts } = await deps.cases.changeStatusOfMany({
      workspaceId,
      ...(body.caseIds ? { caseIds: body.caseIds } : { filter: body.filter ?? {} }),
      max: BULK_MAX,
      status: body.status,
      note: body.note?.trim() || null,
      ...(body.expiresAt !== undefined ? { expiresAt: body.expiresAt } : {}),
      actor: surface.actorOf(req),
    });
    return counts;
  });

  const ownerSchema = {
    summary: 'Set the owner of, and add or remove tags on, many cases',
    body: bulkOwnerBody,
    response: responses({ 200: bulkOwnerResult }, bodyErrors),
  };
  r.post('/cases/owner', { config: write, bodyLimit: 64 * 1024, schema: ownerSchema }, async (req) => {
    const body = req.body;
    const workspaceId = surface.workspaceOf(req);
    const { changedIds: _told, ...counts } = await deps.cases.changeOwnerOfMany({
      workspaceId,
      ...(body.caseIds ? { caseIds: body.caseIds } : { filter: body.filter ?? {} }),
      max: BULK_MAX,
      ...(body.assignee !== undefined ? { assignee: body.assignee } : {}),
      ...(body.addTags ? { addTags: body.addTags } : {}),
      ...(body.removeTags ? { removeTags: body.removeTags } : {}),
    });
    return counts;
  });
}
