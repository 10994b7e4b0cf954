import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { ERROR_STATUS, ERROR_TITLES, type ErrorCode } from '../lib/errors.js';
import { bearerMatches } from '../lib/secret-compare.js';

const PROBLEM_TYPE_BASE = 'https://docs.vulntriage.dev/errors/';

/**
 * The worker process's `GET /metrics` (it has no Fastify app): a bare HTTP listener on
 * METRICS_PORT that answers the scrape and nothing else, with the same bearer check and
 * problem documents (docs/api.md#errors) as the web process.
 */
export async function startMetricsServer(opts: {
  port: number;
  host: string;
  token: string | null;
  scrape(): Promise<{ contentType: string; body: string }>;
}): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const problem = (code: ErrorCode, detail: string, headers: Record<string, string> = {}) => {
      const status = ERROR_STATUS[code];
      res.writeHead(status, { 'content-type': 'application/problem+json', ...headers });
      res.end(
        JSON.stringify({
          type: `${PROBLEM_TYPE_BASE}${code}`,
          title: ERROR_TITLES[code],
          status,
          code,
          detail,
        }),
      );
    };
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return problem('not_found', 'Only GET /metrics is served here.');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return problem('method_not_allowed', 'Use GET /metrics.', { allow: 'GET, HEAD' });
    if (opts.token !== null && !bearerMatches(req.headers.authorization, opts.token)) {
      return problem('unauthenticated', 'Scraping metrics needs `Authorization: Bearer <METRICS_TOKEN>`.', {
        'www-authenticate': 'Bearer realm="metrics"',
      });
    }
    opts.scrape().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => problem('internal_error', 'The metrics could not be collected.'),
    );
  });
  server.listen(opts.port, opts.host);
  await once(server, 'listening');
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : opts.port,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
