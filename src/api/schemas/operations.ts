import { problemResponse } from './responses.js';

/** Response shapes of the operational endpoints (health, readiness, metrics). */

export const healthResponses = {
  200: {
    description: 'The process answers.',
    type: 'object',
    required: ['status'],
    properties: { status: { type: 'string', const: 'ok' } },
  },
} as const;

export const readyResponses = {
  200: {
    description: 'The database and the queue backend can be reached.',
    type: 'object',
    required: ['status'],
    properties: { status: { type: 'string', const: 'ready' } },
  },
  503: problemResponse(503, 'A dependency cannot be reached (each is given 2 s)'),
} as const;

export const metricsResponses = {
  200: {
    description: 'Prometheus text exposition format of this process (README: Operations).',
    content: { 'text/plain': { schema: { type: 'string' } } },
  },
  401: problemResponse(401, '`METRICS_TOKEN` is set and the bearer token is missing or wrong'),
} as const;
