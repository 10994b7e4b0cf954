import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { DEFAULT_SLA_POLICY, type SlaPolicy } from '../../domain/cases/sla-policy.js';
import { noQuery } from '../schemas/common.js';
import { responses } from '../schemas/responses.js';
import { slaPolicyBody, slaPolicyPutView, slaPolicyView } from '../schemas/sla-policy.js';
import { typed } from '../typed-app.js';
import { actorFrom, type Surface } from './surface.js';

const view = (p: SlaPolicy) => ({
  object: 'sla_policy' as const,
  days: p.days,
  exposedDays: p.exposedDays,
  maxAcceptanceDays: p.maxAcceptanceDays,
  updatedAt: p.updatedAt,
});

/**
 * `GET` and `PUT /sla-policy` (docs/cases.md#due-dates-and-sla), written once for both surfaces:
 * `keys:write` behind an API key (it changes every case's due date), the owner's session in the
 * console. A `PUT` replaces the whole policy and answers how many due dates moved; a change is
 * an audit event.
 */
export function registerSlaPolicyRoutes(
  app: FastifyInstance,
  deps: Pick<AppDeps, 'slaPolicy'>,
  surface: Surface,
): void {
  const r = typed(app);
  const config = surface.needs('keys:write');
  const getSchema = {
    summary: "The workspace's SLA policy",
    querystring: noQuery,
    response: responses({ 200: slaPolicyView }, surface.errors),
  };
  r.get('/sla-policy', { config, schema: getSchema }, async (req) =>
    view(await deps.slaPolicy.get(surface.workspaceOf(req))),
  );

  const putSchema = {
    summary: "Replace the workspace's SLA policy (recomputes open cases' due dates)",
    querystring: noQuery,
    body: slaPolicyBody,
    response: responses({ 200: slaPolicyPutView }, [...surface.errors, 413, 415]),
  };
  r.put('/sla-policy', { config, bodyLimit: 4096, schema: putSchema }, async (req) => {
    const b = req.body;
    const { policy, recomputed } = await deps.slaPolicy.put(
      surface.workspaceOf(req),
      {
        days: b.days,
        exposedDays: { ...DEFAULT_SLA_POLICY.exposedDays, ...b.exposedDays },
        maxAcceptanceDays: b.maxAcceptanceDays ?? DEFAULT_SLA_POLICY.maxAcceptanceDays,
      },
      actorFrom(req, surface.actorOf(req)),
    );
    return { ...view(policy), recomputed };
  });
}
