import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { noQuery } from '../schemas/common.js';
import { modelList } from '../schemas/keys-responses.js';
import { KEY_ROUTE_ERRORS, responses } from '../schemas/responses.js';

/** `GET /api/v1/models`: the catalog of docs/triage.md#model-catalog, from `config/models.json`, in a list envelope. */
export function modelRoutes(app: FastifyInstance, deps: Pick<AppDeps, 'config'>): void {
  const data = deps.config.models.map((m) => ({
    id: m.id,
    object: 'model',
    name: m.name,
    stage: m.stage,
    default: m.default,
    routineTier: m.routineTier,
    description: m.description,
    pricing: {
      currency: 'USD',
      unit: '1M tokens',
      input: m.inputPricePerMillion,
      output: m.outputPricePerMillion,
    },
    minimumTier: m.minimumTier,
    max: m.max,
  }));
  app.get(
    '/models',
    {
      schema: {
        summary: 'The model catalog and prices (any valid key)',
        querystring: noQuery,
        response: responses({ 200: modelList }, KEY_ROUTE_ERRORS),
      },
    },
    async () => ({ object: 'list', data }),
  );
}
