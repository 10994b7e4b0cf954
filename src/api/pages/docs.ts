import type { FastifyInstance } from 'fastify';
import helmet, { type FastifyHelmetOptions } from '@fastify/helmet';
import swaggerUi from '@fastify/swagger-ui';
import { helmetOptions } from './security.js';

export const DOCS_PATH = '/docs';

/**
 * The console's CSP with one addition: `data:` images, the small SVG icons Swagger UI's
 * stylesheet carries inline (select arrows, copy buttons, model toggles). An image cannot run
 * script; scripts, styles, fonts and connections stay our own origin only.
 */
function docsHelmetOptions(https: boolean): FastifyHelmetOptions {
  const base = helmetOptions(https);
  const csp = base.contentSecurityPolicy as { directives: Record<string, unknown> };
  return {
    ...base,
    contentSecurityPolicy: { ...csp, directives: { ...csp.directives, imgSrc: ["'self'", 'data:'] } },
  };
}

/**
 * The interactive API reference (Swagger UI) at `/docs`, rendering the app's own OpenAPI
 * document. Its scripts, styles and images are served from the package (no CDN), under the
 * console's strict CSP in its own encapsulation context. `BaseLayout`: no top bar, whose
 * Swagger logo is an inline `<style>` the CSP refuses (and whose URL box has nothing to
 * explore here); no validator badge (it would call validator.swagger.io). Needs the openapi
 * plugin registered on the app first.
 */
export async function registerDocs(app: FastifyInstance, opts: { https: boolean }): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(helmet, docsHelmetOptions(opts.https));
    await scope.register(swaggerUi, {
      routePrefix: DOCS_PATH,
      uiConfig: { layout: 'BaseLayout', validatorUrl: null, deepLinking: true, tryItOutEnabled: false },
      // No logo: its replacement targets the top bar BaseLayout does not have.
      logo: null as never,
      theme: { title: 'Vulnerability triage service — API reference' },
    });
  });
}
