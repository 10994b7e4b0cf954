import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { effectivePlan } from '../../domain/plans/plans.js';
import { billingKeyOf } from '../../domain/keys/billing-key.js';
import type { CaseSelection } from '../../domain/cases/case-candidates.js';
import { CASE_SELECTION_MAX } from '../../domain/cases/case-selection.js';
import { idParams, listFiltersOf, type ListQuery } from '../schemas/scans.js';
import { consoleTriageBody, triageOneBody, triagePreviewBody } from '../schemas/console-data.js';
import { consoleCaseBatch, triagePreview } from '../schemas/console-responses.js';
import { triageAnswer } from '../schemas/triage-responses.js';
import { SESSION_ROUTE_ERRORS, responses } from '../schemas/responses.js';
import { typed } from '../typed-app.js';
import { requireRole } from '../plugins/console-session.js';

/** A triage can also find the month spent (429) and no model to answer (503). */
const TRIAGE_ERRORS = [...SESSION_ROUTE_ERRORS, 413, 415, 429];

/** The scopes a triage of cases needs of the key it is billed to, as on `POST /api/v1/cases/triage`. */
const TRIAGE_SCOPES = ['cases:write', 'triage:write'];

/** A selection of the console's bodies: their `oneOf` lets `caseIds` or `filters` through, never both. */
const selectionOf = (caseIds: readonly string[] | undefined, filters: ListQuery = {}): CaseSelection =>
  caseIds ? { caseIds } : { filters: listFiltersOf(filters) };

/**
 * Triage from the Cases and Case pages (docs/console.md#cases), through the same case triage service as
 * `POST /api/v1/cases/triage` and `/cases/:id/triage`: the same selection, riskiest first within
 * the month's AI calls, billed to the key the person picks (the console user has none of their
 * own). The preview says how many AI calls a triage would use and how many the month has left.
 */
export function consoleTriageRoutes(
  untyped: FastifyInstance,
  deps: Pick<AppDeps, 'caseSelection' | 'caseTriage' | 'clock' | 'config' | 'keys' | 'quota' | 'workspaces'>,
): void {
  const app = typed(untyped);

  async function monthLimit(workspaceId: string): Promise<number> {
    const ws = await deps.workspaces.workspaceOf(workspaceId);
    return effectivePlan(ws, deps.config.plans, deps.clock()).limits.aiCallsPerMonth;
  }

  async function caller(req: FastifyRequest, keyId: string) {
    const workspaceId = req.session.workspaceId;
    const key = billingKeyOf(
      await deps.keys.listKeys(workspaceId),
      keyId,
      TRIAGE_SCOPES,
      deps.clock(),
      '/key',
    );
    return { workspaceId, keyId: key.id, requestId: req.id, aiCallLimit: await monthLimit(workspaceId) };
  }

  app.post(
    '/cases/triage/preview',
    {
      config: requireRole('member'),
      bodyLimit: 64 * 1024,
      schema: {
        summary: 'How many AI calls a triage of the chosen cases would use',
        body: triagePreviewBody,
        response: responses({ 200: triagePreview }, [...SESSION_ROUTE_ERRORS, 413, 415]),
      },
    },
    async (req) => {
      const workspaceId = req.session.workspaceId;
      const [candidates, limit, usage] = await Promise.all([
        deps.caseSelection.candidates(
          workspaceId,
          selectionOf(req.body.caseIds, req.body.filters),
          CASE_SELECTION_MAX,
        ),
        monthLimit(workspaceId),
        deps.quota.usage(workspaceId),
      ]);
      const remaining = Math.max(0, limit - usage.used - usage.reserved);
      return {
        cases: candidates.length,
        aiCalls: Math.min(candidates.length, remaining),
        skippedForQuota: Math.max(0, candidates.length - remaining),
        month: { limit, used: usage.used, reserved: usage.reserved, remaining },
      };
    },
  );

  app.post(
    '/cases/triage',
    {
      config: requireRole('member'),
      bodyLimit: 64 * 1024,
      schema: {
        summary: 'Triage the chosen cases, billed to a key of the workspace',
        body: consoleTriageBody,
        response: responses({ 200: consoleCaseBatch, 202: consoleCaseBatch }, TRIAGE_ERRORS),
      },
    },
    async (req, reply) => {
      const { key, caseIds, filters } = req.body;
      const accepted = await deps.caseTriage.acceptCaseBatch(
        await caller(req, key),
        selectionOf(caseIds, filters),
      );
      if (accepted.batchId) void reply.code(202);
      return accepted;
    },
  );

  app.post(
    '/cases/:id/triage',
    {
      config: requireRole('member'),
      bodyLimit: 1024,
      schema: {
        summary: 'Triage one case now, billed to a key of the workspace',
        params: idParams,
        body: triageOneBody,
        response: responses({ 200: triageAnswer }, [...TRIAGE_ERRORS, 404]),
      },
    },
    async (req) => deps.caseTriage.triageCase(await caller(req, req.body.key), req.params.id),
  );
}
