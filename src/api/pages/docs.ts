import type { FastifyInstance } from 'fastify';
import helmet from '@fastify/helmet';
import swaggerUi from '@fastify/swagger-ui';
import { helmetOptions } from './security.js';

export const DOCS_PATH = '/docs';

/**
 * The interactive API reference (Swagger UI) at `/docs`, rendering the app's own OpenAPI
 * document. Its scripts, styles and images are served from the package (no CDN), under the
 * console's strict CSP in its own encapsulation context; no validator badge (it would call
 * validator.swagger.io). Needs the openapi plugin registered on the app first.
 */
export async function registerDocs(app: FastifyInstance, opts: { https: boolean }): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(helmet, helmetOptions(opts.https));
    await scope.register(swaggerUi, {
      routePrefix: DOCS_PATH,
      uiConfig: { validatorUrl: null, deepLinking: true, tryItOutEnabled: false },
      theme: { title: 'Vulnerability triage service — API reference' },
    });
  });
}
