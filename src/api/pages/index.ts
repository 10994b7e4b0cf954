import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { AppDeps } from '../app-deps.js';
import { projectRoot } from '../../lib/config.js';
import { SESSION_COOKIE } from '../plugins/console-session.js';
import type { SafeHtml } from './html.js';
import { helmetOptions, NO_STORE } from './security.js';
import { loginPage, signupPage } from './templates/auth-pages.js';
import { revealPage } from './templates/reveal-page.js';
import {
  forgotPasswordPage,
  invitationPage,
  membersPage,
  resetPasswordPage,
} from './templates/member-pages.js';
import { settingsPage } from './templates/settings-page.js';
import { slaPage } from './templates/sla-page.js';
import { auditPage } from './templates/audit-page.js';
import { scansPage } from './templates/scans-page.js';
import { casesPage } from './templates/cases-page.js';
import { casePage, caseNotFoundPage } from './templates/case-page.js';
import { dashboardPage } from './templates/dashboard-page.js';
import { workflowsPage } from './templates/workflows-page.js';
import { ssoPage } from './templates/sso-page.js';
import { dataPage } from './templates/data-page.js';
import type { Session } from '../../domain/workspaces/sessions.js';
import { monthOf, nextMonthStart } from '../../domain/plans/plans.js';
import { typed } from '../typed-app.js';

/** Reveal tokens are base64url; anything else is not a link we made. */
const TOKEN = /^[A-Za-z0-9_-]{16,100}$/;
/** Where `?next=` may send a person after sign-in: our own pages, spelled without `//` or encoding. */
const LOCAL_NEXT =
  /^\/(?:settings\/(?:api-keys|members|audit-log|workflows|single-sign-on|data|sla)|reveal\/[A-Za-z0-9_-]{16,100}|scans|cases|cases\/[0-9a-f-]{36})?$/;

/** The pages' path parameters: any text (a page answers an unknown one itself, never 400). */
const caseParams = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } as const;
const revealParams = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string' } },
} as const;

/**
 * `?next=`, `?notice=` and `?sso=` of the sign-in page. Given twice, one is a list, which the page
 * ignores as it ignores any value it does not know, rather than refuse the page.
 */
const loginQuery = {
  type: 'object',
  properties: {
    next: { type: ['string', 'array'] },
    notice: { type: ['string', 'array'] },
    sso: { type: ['string', 'array'] },
  },
} as const;

/** Days of new cases the dashboard's chart shows. */
const DASHBOARD_DAYS = 30;

type PageDeps = Pick<AppDeps, 'cases' | 'clock' | 'config' | 'sessions' | 'usageReports'>;

/**
 * The static assets sit beside this file in the source tree. A `dist/` build does not
 * copy them, so it serves them from the source tree found through the project root.
 */
function staticDir(): string {
  const here = fileURLToPath(new URL('./static/', import.meta.url));
  return existsSync(here) ? here : path.join(projectRoot, 'src', 'api', 'pages', 'static');
}

/**
 * The console pages (docs/console.md#sign-up-and-api-keys): sign-up, sign-in, the one-time reveal page and
 * Settings > API keys. Server-rendered shells plus small static scripts that call the
 * console JSON API under `/api/console`. Settings > Audit log lists the workspace's audit events.
 *
 * Everything is registered in its own encapsulation context, so Helmet's headers (strict
 * CSP, frame-ancestors 'none', no-referrer) apply to these pages and `/assets/` only and
 * leave the JSON API's headers as they are.
 */
export async function registerPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(helmet, helmetOptions(deps.config.cookieSecure));
    await scope.register(fastifyStatic, {
      root: staticDir(),
      prefix: '/assets/',
      index: false,
      list: false,
      wildcard: false,
      decorateReply: false,
      cacheControl: false,
      setHeaders: (reply) => void reply.header('Cache-Control', 'no-cache'),
    });
    pageRoutes(scope, deps);
  });
}

function pageRoutes(untyped: FastifyInstance, deps: PageDeps): void {
  const app = typed(untyped);

  async function sessionOf(req: FastifyRequest): Promise<Session | null> {
    const token = req.cookies[SESSION_COOKIE];
    return token ? deps.sessions.find(token) : null;
  }

  async function signedIn(req: FastifyRequest): Promise<boolean> {
    return (await sessionOf(req)) !== null;
  }

  function page(reply: FastifyReply, body: SafeHtml): FastifyReply {
    return reply.header('Cache-Control', NO_STORE).type('text/html; charset=utf-8').send(body.value);
  }

  function redirect(reply: FastifyReply, to: string): FastifyReply {
    return reply.header('Cache-Control', NO_STORE).redirect(to, 303);
  }

  /** Sends a signed-out person to sign-in and back here afterwards. */
  function toLogin(reply: FastifyReply, back: string): FastifyReply {
    return redirect(reply, LOCAL_NEXT.test(back) ? `/login?next=${back}` : '/login');
  }

  app.get('/', async (req, reply) => {
    const session = await sessionOf(req);
    if (!session) return redirect(reply, '/signup');
    const now = deps.clock();
    const from = new Date(`${monthOf(now).slice(0, 7)}-01T00:00:00Z`);
    const [cases, statement] = await Promise.all([
      deps.cases.dashboard(session.workspaceId, now, DASHBOARD_DAYS),
      deps.usageReports.monthlyStatement(session.workspaceId, from, nextMonthStart(from)),
    ]);
    return page(reply, dashboardPage({ ...cases, aiCallsThisMonth: statement.totals.aiCalls }));
  });

  app.get('/scans', async (req, reply) => {
    if (!(await signedIn(req))) return toLogin(reply, '/scans');
    return page(reply, scansPage());
  });

  app.get('/cases', async (req, reply) => {
    if (!(await signedIn(req))) return toLogin(reply, '/cases');
    return page(reply, casesPage());
  });

  app.get('/cases/:id', { schema: { params: caseParams } }, async (req, reply) => {
    const { id } = req.params;
    const session = await sessionOf(req);
    if (!session) return toLogin(reply, `/cases/${id}`);
    // Another workspace's case is as unknown as a made-up id (docs/api.md#errors).
    if (!(await deps.cases.get(session.workspaceId, id))) {
      return page(reply.code(404), caseNotFoundPage());
    }
    return page(reply, casePage(id));
  });

  app.get('/signup', async (req, reply) =>
    (await signedIn(req)) ? redirect(reply, '/settings/api-keys') : page(reply, signupPage(deps.config)),
  );

  app.get('/login', { schema: { querystring: loginQuery } }, async (req, reply) => {
    const { next, notice, sso } = req.query;
    // `?sso=` asks for another workspace's own sign-in (docs/console.md#sso-and-sessions): the
    // page shows even to a person signed in elsewhere.
    if (sso === undefined && (await signedIn(req))) {
      return redirect(reply, typeof next === 'string' && LOCAL_NEXT.test(next) ? next : '/settings/api-keys');
    }
    return page(reply, loginPage(typeof notice === 'string' ? notice : undefined));
  });

  app.get('/reveal/:token', { schema: { params: revealParams } }, async (req, reply) => {
    const { token } = req.params;
    if (!(await signedIn(req)))
      return TOKEN.test(token) ? toLogin(reply, `/reveal/${token}`) : redirect(reply, '/login');
    return page(reply, revealPage());
  });

  app.get('/settings', async (_req, reply) => redirect(reply, '/settings/api-keys'));

  app.get('/settings/api-keys', async (req, reply) => {
    if (!(await signedIn(req))) return toLogin(reply, '/settings/api-keys');
    return page(reply, settingsPage(deps.config));
  });

  app.get('/settings/workflows', async (req, reply) => {
    if (!(await signedIn(req))) return toLogin(reply, '/settings/workflows');
    return page(reply, workflowsPage());
  });

  app.get('/settings/single-sign-on', async (req, reply) => {
    if (!(await signedIn(req))) return toLogin(reply, '/settings/single-sign-on');
    return page(reply, ssoPage());
  });

  app.get('/settings/data', async (req, reply) => {
    if (!(await signedIn(req))) return toLogin(reply, '/settings/data');
    return page(reply, dataPage());
  });

  app.get('/settings/sla', async (req, reply) => {
    if (!(await signedIn(req))) return toLogin(reply, '/settings/sla');
    return page(reply, slaPage());
  });

  app.get('/settings/members', async (req, reply) => {
    if (!(await signedIn(req))) return toLogin(reply, '/settings/members');
    return page(reply, membersPage());
  });

  // Invitation and reset links work signed out: their pages ask the API about the token.
  app.get('/invitations/:token', { schema: { params: revealParams } }, async (_req, reply) =>
    page(reply, invitationPage()),
  );
  app.get('/forgot-password', async (_req, reply) => page(reply, forgotPasswordPage()));
  app.get('/reset-password/:token', { schema: { params: revealParams } }, async (_req, reply) =>
    page(reply, resetPasswordPage()),
  );

  app.get('/settings/audit-log', async (req, reply) => {
    if (!(await signedIn(req))) return toLogin(reply, '/settings/audit-log');
    return page(reply, auditPage());
  });
}
