import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../../lib/errors.js';
import { bearerMatches } from '../../lib/secret-compare.js';
import { metricsResponses } from '../schemas/operations.js';

/**
 * What the HTTP edge records and serves; built in the composition root on the process's own
 * registry (`src/app/metrics/`), so several apps in one test process never share counters.
 */
export interface HttpMetrics {
  /** One answered request: the route pattern (never the raw URL), method, status and seconds. */
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  /** The Prometheus text exposition of every metric of this process, and its content type. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

/** Route label of requests no route matched: raw URLs would give unbounded label values. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * `GET /metrics` (Prometheus text format) and an `onResponse` hook timing every request.
 * With a token, a scrape without `Authorization: Bearer <token>` gets a 401 problem document.
 * Registered on the root before the route groups, so the hook sees every route.
 */
export const metricsPlugin = fp(
  async (app: FastifyInstance, opts: { metrics: HttpMetrics; token: string | null }) => {
    app.addHook('onResponse', async (req, reply) => {
      const route = req.routeOptions.url ?? UNMATCHED_ROUTE;
      opts.metrics.observeRequest(route, req.method, reply.statusCode, reply.elapsedTime / 1000);
    });
    app.get(
      '/metrics',
      { schema: { summary: 'Prometheus metrics', response: metricsResponses } },
      async (req, reply) => {
        if (opts.token !== null && !bearerMatches(req.headers.authorization, opts.token)) {
          throw new AppError(
            'unauthenticated',
            'Scraping metrics needs `Authorization: Bearer <METRICS_TOKEN>`.',
            { headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' } },
          );
        }
        const { contentType, body } = await opts.metrics.scrape();
        return reply.header('Cache-Control', 'no-store').type(contentType).send(body);
      },
    );
  },
  { name: 'metrics' },
);
