import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { caseSelectionOf } from '../../domain/cases/case-selection.js';
import { idParams, listFiltersOf } from '../schemas/scans.js';
import { caseTriageBody } from '../schemas/case-triage.js';
import { caseBatchAccepted, triageAnswer } from '../schemas/triage-responses.js';
import { KEY_ROUTE_ERRORS, responses } from '../schemas/responses.js';
import { typed } from '../typed-app.js';

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
 * Case triage under `/api/v1` (docs/cases.md#triage-on-a-case): `POST /cases/triage` (a batch over selected cases,
 * 202 with the batch's `statusUrl`) and `POST /cases/:id/triage` (one case, answered like
 * `POST /api/v1/triage`). Both spend AI calls and change cases: they need `cases:write` and
 * `triage:write`. Another workspace's case is 404, like an unknown one.
 */
export function registerCaseTriageRoutes(app: FastifyInstance, deps: Pick<AppDeps, 'caseTriage'>): void {
  const scope = ['cases:write', 'triage:write'] as const;

  typed(app).post(
    '/cases/triage',
    {
      config: { scope },
      bodyLimit: 64 * 1024,
      schema: {
        summary: 'Triage cases chosen by id or by the list filters (a batch)',
        body: caseTriageBody,
        response: responses({ 200: caseBatchAccepted, 202: caseBatchAccepted }, BODY_ROUTE_ERRORS),
      },
    },
    async (req, reply) => {
      const { caseIds, ...filters } = req.body;
      const named = Object.keys(filters);
      const accepted = await deps.caseTriage.acceptCaseBatch(
        caller(req),
        caseSelectionOf(caseIds, listFiltersOf(filters), named),
      );
      const statusUrl = accepted.batchId ? `/api/v1/triage/batch/${accepted.batchId}` : null;
      if (statusUrl) void reply.code(202).header('Location', statusUrl);
      return {
        batchId: accepted.batchId,
        status: accepted.batchId ? 'queued' : 'completed',
        requested: accepted.requested,
        total: accepted.total,
        skippedForQuota: accepted.skippedForQuota,
        statusUrl,
      };
    },
  );

  typed(app).post(
    '/cases/:id/triage',
    {
      config: { scope },
      bodyLimit: 1024,
      schema: {
        summary: 'Triage one case now',
        params: idParams,
        response: responses({ 200: triageAnswer }, [...BODY_ROUTE_ERRORS, 404]),
      },
    },
    // The answer is stored with its `case.triaged` deliveries (docs/workflows.md#when-deliveries-happen).
    async (req) => deps.caseTriage.triageCase(caller(req), req.params.id),
  );
}
