import type { Config } from '../lib/config.js';
import { randomUUID } from 'node:crypto';
import { invalidRequest } from '../lib/errors.js';
import { unstorableTextErrors } from '../lib/storable-text.js';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import { Ajv } from 'ajv';
import type { AppDeps } from './app-deps.js';
import { RequestLineLogController } from './plugins/request-line-log.js';
import { problemPlugin } from './plugins/problem.js';
import { clientErrorHandler, frameworkErrors } from './plugins/client-errors.js';
import { metricsPlugin } from './plugins/metrics.js';
import { openapiPlugin } from './plugins/openapi.js';
import { registerQueueDashboard } from './plugins/queue-dashboard.js';
import { apiKeyAuth } from './plugins/api-key-auth.js';
import { consoleSession } from './plugins/console-session.js';
import { healthRoutes } from './routes/health.js';
import { modelRoutes } from './routes/models.js';
import { selfServiceRoutes } from './routes/self-service.js';
import { consoleAuthRoutes } from './routes/console-auth.js';
import { consoleWorkspaceRoutes } from './routes/console-workspace.js';
import { consoleWorkspaceDeletionRoutes } from './routes/console-workspace-deletion.js';
import { consoleSsoRoutes } from './routes/console-sso.js';
import { consoleTriageRoutes } from './routes/console-triage.js';
import { consoleMemberRoutes } from './routes/console-members.js';
import { consoleInvitationRoutes } from './routes/console-invitations.js';
import { consolePasswordResetRoutes } from './routes/console-password-reset.js';
import { actorFrom, registerKeyManagement } from './routes/key-management.js';
import { triageRoutes } from './routes/triage.js';
import { registerPipelineScanRoute, registerScanRoutes } from './routes/scans.js';
import { registerConsoleUploadRoute, registerPipelineUploadRoute } from './routes/scan-upload.js';
import { registerCaseRoutes } from './routes/cases.js';
import { registerSlaPolicyRoutes } from './routes/sla-policy.js';
import { registerCaseBulkRoutes } from './routes/case-bulk.js';
import { registerDashboardRoute } from './routes/dashboard.js';
import { apiSurface, consoleSurface } from './routes/surface.js';
import { registerCaseTriageRoutes } from './routes/case-triage.js';
import { registerAuditEventRoutes } from './routes/audit-events.js';
import { registerExportDownloadRoute, registerExportRoutes } from './routes/exports.js';
import { registerPages } from './pages/index.js';
import { registerDocs } from './pages/docs.js';
import { registerWorkflowRoutes } from './routes/workflows.js';
import { registerWorkflowHookRoutes } from './routes/workflow-hooks.js';

/** How the app is run (not what it serves): options of {@link buildApp}. */
export interface AppOptions {
  /** `line`: one short line per request (a person's terminal) instead of Fastify's two JSON lines. */
  requestLog?: 'json' | 'line';
}

/**
 * Body validation never coerces types or drops unknown fields: a wrong type or a typo is
 * a 400 naming the field (docs/api.md#errors, docs/triage.md#request-and-answer). Query strings and params are text by nature,
 * so their validator may coerce.
 */
export function validators(): { body: Ajv; other: Ajv } {
  const base = { allErrors: true, removeAdditional: false, useDefaults: false, strict: false } as const;
  return { body: new Ajv({ ...base, coerceTypes: false }), other: new Ajv({ ...base, coerceTypes: true }) };
}

/**
 * The query parser's object copied into a plain one (its prototype is not `Object.prototype`, and
 * the storable-text walk reads plain objects only). A spread defines each key as its own, so a
 * key named `__proto__` is copied as one, not taken as the copy's prototype.
 */
function plainCopy(query: unknown): Record<string, unknown> {
  return typeof query === 'object' && query !== null ? { ...query } : {};
}

/**
 * Fastify's `trustProxy` for TRUST_PROXY: a hop count trusts that many proxies in front of us
 * (Fastify's typings name no number, so as the function proxy-addr makes of one), a list trusts
 * those addresses and ranges, false trusts none.
 */
function trustProxyOption(
  trust: Config['trustProxy'],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return trust;
}

/**
 * Builds the whole HTTP app (JSON API and console pages) from its dependencies; `server.ts`
 * starts it, tests `inject` into it. Each route group receives the few services it uses.
 */
export async function buildApp(deps: AppDeps, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as unknown as FastifyBaseLogger,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    bodyLimit: 64 * 1024,
    // Node's backstop for any request (docs/ingestion.md#upload-bounds): no request lives longer than the longest
    // upload allowed. Uploads are cut sooner by their own idle and body timeouts (a 408 problem).
    requestTimeout: deps.config.uploads.bodyTimeoutMs + 60_000,
    // Requests that arrive while closing get 503 from the problem plugin, as a problem document.
    return503OnClosing: false,
    // Answers written before a route runs are problem documents too.
    frameworkErrors,
    clientErrorHandler,
    // Behind a load balancer `request.ip` is the client's only for the proxies TRUST_PROXY names
    // (docs/deploy.md#behind-a-load-balancer): per-address limits and audit events use it.
    trustProxy: trustProxyOption(deps.config.trustProxy),
    ...(options.requestLog === 'line' ? { logController: new RequestLineLogController() } : {}),
  });
  const ajv = validators();
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? ajv.body : ajv.other).compile(schema),
  );
  // Response schemas describe answers (the OpenAPI document, tests check real answers against
  // them); they never shape them. fast-json-stringify would silently drop any field a schema
  // does not list, so answers are written as the handlers built them.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.removeContentTypeParser('text/plain');
  // A POST without a body is read as `{}`, so action routes (revoke) need no body and
  // routes with required fields list every missing one instead of "must be object".
  app.addHook('preValidation', async (req) => {
    if (req.body === undefined && req.method === 'POST') req.body = {};
    // Before any route sees it: PostgreSQL cannot store U+0000 (see storable-text.ts).
    const nul = [
      ...unstorableTextErrors(plainCopy(req.query), '/querystring'),
      ...unstorableTextErrors(req.body),
    ];
    if (nul.length > 0) throw invalidRequest(nul);
  });
  app.addHook('onSend', async (req, reply) => {
    void reply.header('X-Request-Id', req.id).header('X-Content-Type-Options', 'nosniff');
  });

  await app.register(problemPlugin);
  // Before every route: the document is collected from the routes as they are registered.
  await app.register(openapiPlugin, {
    version: deps.config.version,
    publicBaseUrl: deps.config.publicBaseUrl,
  });
  if (deps.metrics)
    await app.register(metricsPlugin, { metrics: deps.metrics, token: deps.config.metricsToken });
  await app.register(cookie);
  healthRoutes(app, deps);
  registerExportDownloadRoute(app, deps);

  await app.register(
    async (scope) => {
      consoleSession(scope, deps.sessions);
      // The console's answers are one person's workspace: no shared cache keeps them.
      scope.addHook('onSend', async (_req, reply) => {
        if (!reply.hasHeader('cache-control')) void reply.header('Cache-Control', 'no-store');
      });
      consoleAuthRoutes(scope, deps);
      consoleWorkspaceRoutes(scope, deps);
      consoleMemberRoutes(scope, deps);
      consoleInvitationRoutes(scope, deps);
      consolePasswordResetRoutes(scope, deps);
      consoleWorkspaceDeletionRoutes(scope, deps);
      consoleSsoRoutes(scope, deps);
      registerScanRoutes(scope, deps.scans, consoleSurface);
      registerConsoleUploadRoute(scope, deps, consoleSurface);
      registerCaseRoutes(scope, deps, consoleSurface);
      registerSlaPolicyRoutes(scope, deps, consoleSurface);
      registerCaseBulkRoutes(scope, deps, consoleSurface);
      registerExportRoutes(scope, deps, consoleSurface);
      registerDashboardRoute(scope, deps);
      consoleTriageRoutes(scope, deps);
      registerWorkflowRoutes(scope, deps, consoleSurface);
      registerKeyManagement(scope, deps, {
        workspaceOf: (req) => req.session.workspaceId,
        actorOf: (req) => actorFrom(req, `user:${req.session.userId}`),
        viaRevealPage: true,
        role: 'admin',
      });
    },
    { prefix: '/api/console' },
  );

  const keyAuth = {
    verifier: deps.verifier,
    meter: deps.meter,
    rateLimiter: deps.rateLimiter,
    plans: deps.config.plans,
    clock: deps.clock,
  };
  await app.register(
    async (scope) => {
      apiKeyAuth(scope, keyAuth);
      modelRoutes(scope, deps);
      selfServiceRoutes(scope, deps);
      triageRoutes(scope, deps);
      registerScanRoutes(scope, deps.scans, apiSurface);
      registerCaseRoutes(scope, deps, apiSurface);
      registerSlaPolicyRoutes(scope, deps, apiSurface);
      registerCaseBulkRoutes(scope, deps, apiSurface);
      registerCaseTriageRoutes(scope, deps);
      registerExportRoutes(scope, deps, apiSurface);
      registerKeyManagement(scope, deps, {
        workspaceOf: (req) => req.apiKey.workspace.id,
        actorOf: (req) => actorFrom(req, `key:${req.apiKey.id}`),
        viaRevealPage: false,
        scope: 'keys:write',
      });
      registerAuditEventRoutes(scope, deps);
      registerWorkflowRoutes(scope, deps, apiSurface);
    },
    { prefix: '/api/v1' },
  );
  await app.register(
    async (scope) => {
      apiKeyAuth(scope, keyAuth);
      registerPipelineUploadRoute(scope, deps, apiSurface);
      registerPipelineScanRoute(scope, deps.scans, apiSurface);
    },
    { prefix: '/api/pipeline' },
  );
  await registerWorkflowHookRoutes(app, deps);
  if (deps.config.adminToken)
    await registerQueueDashboard(app, {
      queues: deps.queues,
      adminToken: deps.config.adminToken,
      https: deps.config.cookieSecure,
    });
  await registerPages(app, deps);
  await registerDocs(app, { https: deps.config.cookieSecure });
  return app;
}
