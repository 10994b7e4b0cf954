import type { FastifyInstance } from 'fastify';
import type { AppDeps } from './app-deps.js';
import { buildApp, type AppOptions } from './app.js';

/**
 * Starts the HTTP server. `close()` stops accepting connections, answers 503 to new
 * requests on kept-alive sockets, and resolves once in-flight requests have finished.
 */
export async function startServer(
  deps: AppDeps,
  options: AppOptions = {},
): Promise<{ app: FastifyInstance; url: string; close(): Promise<void> }> {
  const app = await buildApp(deps, options);
  await app.listen({ port: deps.config.port, host: deps.config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : deps.config.port;
  const host = deps.config.host.includes(':') ? `[${deps.config.host}]` : deps.config.host;
  return {
    app,
    url: `http://${host}:${port}`,
    async close() {
      // Node's server.close() waits for every connection to end, and a keep-alive connection
      // whose request was in flight when we began closing only becomes idle later: close idle
      // connections as they appear, so shutdown ends when the last answer has been sent.
      const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
      try {
        await app.close();
      } finally {
        clearInterval(sweep);
      }
    },
  };
}
