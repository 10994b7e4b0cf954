import type { FastifyInstance } from 'fastify';
import type { Queue } from 'bullmq';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import helmet from '@fastify/helmet';
import { problemOf } from './problem.js';
import { basicPasswordMatches } from '../../lib/secret-compare.js';
import type { QueueKit } from '../../jobs/queue-kit.js';
import { SERVICE_QUEUES } from '../../jobs/service-queues.js';

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/**
 * Bull Board's page asks Google Fonts for IBM Plex and draws its "Loading" placeholder with inline
 * styles. Served here without either: the fonts fall back to the system's sans-serif and
 * monospace, and every style comes from its own stylesheet, so the page keeps a strict CSP and
 * an operator's browser calls no third party.
 */
const EXTERNAL_FONTS = /<link[^>]*href="https:\/\/fonts\.(?:googleapis|gstatic)\.com[^"]*"[^>]*>\s*/g;
const INLINE_STYLE = /\sstyle="[^"]*"|<style>[\s\S]*?<\/style>/g;

export function withoutThirdPartyFontsOrInlineStyles(html: string): string {
  return html.replace(EXTERNAL_FONTS, '').replace(INLINE_STYLE, '');
}

/**
 * The one `<style>` Bull Board renders itself: the colours inside its Redis logo (an SVG in
 * the header), allowed by its hash rather than by `'unsafe-inline'`. Pinned to
 * @bull-board/ui 9.10.1; after an upgrade test/e2e/queue-dashboard.test.ts names the new hash.
 */
const REDIS_LOGO_STYLE = "'sha256-r2N1TB/gHbBtBZFKg7ejmq1acVSREzucTAEw6ga4hoU='";

/** The console's CSP, plus `data:` images (Bull Board's icons); nothing from another origin. */
function dashboardCsp(https: boolean) {
  return {
    global: true,
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", REDIS_LOGO_STYLE],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'"],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        ...(https ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    crossOriginEmbedderPolicy: false,
    frameguard: { action: 'deny' as const },
    referrerPolicy: { policy: 'no-referrer' as const },
    hsts: https ? { maxAge: 31_536_000, includeSubDomains: true } : false,
  };
}

/**
 * Bull Board, the operators' view of the queues, at `/admin/queues` behind HTTP basic auth
 * (any user name, ADMIN_TOKEN as the password, compared in constant time). Redis queues only:
 * the board reads BullMQ's Redis structures and the server's INFO, which the PostgreSQL backend
 * does not have, so on that backend it is not mounted (README "Operations").
 */
export async function registerQueueDashboard(
  app: FastifyInstance,
  opts: { queues: QueueKit; adminToken: string; https: boolean },
): Promise<void> {
  if (opts.queues.kind !== 'redis') return;
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    // Redis handles are BullMQ Queue objects (see queue-kit.ts); the kit closes them on shutdown.
    queues: SERVICE_QUEUES.map((name) => new BullMQAdapter(opts.queues.queue(name) as unknown as Queue)),
    serverAdapter,
  });
  await app.register(async (scope) => {
    await scope.register(helmet, dashboardCsp(opts.https));
    scope.addHook('onSend', async (_req, reply, payload) => {
      const html = String(reply.getHeader('content-type') ?? '').startsWith('text/html');
      return html && typeof payload === 'string' ? withoutThirdPartyFontsOrInlineStyles(payload) : payload;
    });
    // Answered here, not thrown: errors inside Bull Board's routes meet its own error handler.
    scope.addHook('onRequest', async (req, reply) => {
      if (basicPasswordMatches(req.headers.authorization, opts.adminToken)) return;
      return reply
        .code(401)
        .header('WWW-Authenticate', 'Basic realm="queues", charset="UTF-8"')
        .type('application/problem+json')
        .send(
          problemOf(
            'unauthenticated',
            "The queue dashboard needs the operators' password (ADMIN_TOKEN).",
            req.id,
          ),
        );
    });
    await scope.register(serverAdapter.registerPlugin(), { prefix: QUEUE_DASHBOARD_PATH });
  });
}
