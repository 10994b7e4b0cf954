import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { AppError } from '../../lib/errors.js';
import { rateLimitHeaders } from '../../domain/usage/rate-limiter.js';
import { SIGN_IN_TTL_MS } from '../../domain/workspaces/sso/sso-sign-in.js';
import { requireRole, setSessionCookie } from '../plugins/console-session.js';
import { noQuery } from '../schemas/common.js';
import { PUBLIC_ROUTE_ERRORS, SESSION_ROUTE_ERRORS, responses } from '../schemas/responses.js';
import {
  ssoCallbackQuery,
  ssoSettingsBody,
  ssoSettingsView,
  ssoStartBody,
  ssoStarted,
} from '../schemas/sso.js';
import { actorFrom } from './key-management.js';
import { typed } from '../typed-app.js';

/**
 * The cookie that ties a sign-in to the browser that started it (docs/console.md#single-sign-on):
 * SameSite=Lax, because the provider's redirect back is a cross-site navigation, which a Strict
 * cookie would not ride; scoped to the SSO routes and as short-lived as the sign-in.
 */
const BROWSER_COOKIE = 'svc_sso';
const COOKIE_PATH = '/api/console/sso';
const STARTS_PER_MINUTE_PER_IP = 20;

/**
 * The page the callback answers with: the session cookie is SameSite=Strict, and a browser
 * does not send it on a redirect chain that began at the provider's site; a refresh from this
 * page of ours is a same-site navigation, so the console opens signed in.
 */
const CONTINUE_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
  '<meta http-equiv="refresh" content="0;url=/"><title>Signing in…</title></head>' +
  '<body><p>Signed in. <a href="/">Continue to the console</a>.</p></body></html>';

/** Settings > Single sign-on and the SSO sign-in (start and the provider's callback). */
export function consoleSsoRoutes(
  untyped: FastifyInstance,
  deps: Pick<AppDeps, 'config' | 'rateLimiter' | 'sessions' | 'sso'>,
): void {
  const app = typed(untyped);
  const secure = deps.config.cookieSecure;

  app.get(
    '/sso',
    {
      config: requireRole('admin'),
      schema: {
        summary: "The workspace's single sign-on settings",
        querystring: noQuery,
        response: responses({ 200: ssoSettingsView }, SESSION_ROUTE_ERRORS),
      },
    },
    async (req, reply) => {
      void reply.header('Cache-Control', 'no-store');
      return deps.sso.settings(req.session.workspaceId);
    },
  );

  app.put(
    '/sso',
    {
      config: requireRole('admin'),
      bodyLimit: 32 * 1024,
      schema: {
        summary: "Change the workspace's single sign-on settings",
        body: ssoSettingsBody,
        response: responses({ 200: ssoSettingsView }, [...SESSION_ROUTE_ERRORS, 409, 413, 415]),
      },
    },
    async (req) =>
      deps.sso.saveSettings(
        req.session.workspaceId,
        { ...req.body, issuer: req.body.issuer.trim() },
        actorFrom(req, `user:${req.session.userId}`),
      ),
  );

  app.post(
    '/sso/start',
    {
      config: { public: true },
      bodyLimit: 4096,
      schema: {
        summary: 'Start signing in with SSO, by workspace slug or email address',
        body: ssoStartBody,
        response: responses({ 200: ssoStarted }, [...PUBLIC_ROUTE_ERRORS, 404, 413, 415, 429]),
      },
    },
    async (req, reply) => {
      const d = await deps.rateLimiter.hit(`sso-start:${req.ip}`, STARTS_PER_MINUTE_PER_IP, 60_000);
      if (!d.allowed) {
        throw new AppError('rate_limited', 'Too many attempts; wait and try again.', {
          headers: rateLimitHeaders(d),
        });
      }
      const { workspace, email } = req.body;
      const started = await deps.sso.start(
        workspace !== undefined ? { slug: workspace } : { email: (email ?? '').trim() },
      );
      void reply.header('Cache-Control', 'no-store').setCookie(BROWSER_COOKIE, started.browserSecret, {
        httpOnly: true,
        sameSite: 'lax',
        secure,
        path: COOKIE_PATH,
        maxAge: SIGN_IN_TTL_MS / 1000,
      });
      return { authorizationUrl: started.authorizationUrl };
    },
  );

  app.get(
    '/sso/callback',
    {
      config: { public: true },
      schema: {
        summary: "The identity provider's redirect back (signs in, then opens the console)",
        querystring: ssoCallbackQuery,
        response: responses(
          { 200: { description: 'Signed in (session cookie set); an HTML page that opens the console.' } },
          [...PUBLIC_ROUTE_ERRORS, 401],
        ),
      },
    },
    async (req, reply) => {
      void reply
        .header('Cache-Control', 'no-store')
        .clearCookie(BROWSER_COOKIE, { httpOnly: true, sameSite: 'lax', secure, path: COOKIE_PATH });
      const signedIn = await deps.sso.finish({
        callbackUrl: new URL(req.url, deps.config.publicBaseUrl),
        state: req.query.state,
        browserSecret: req.cookies[BROWSER_COOKIE] ?? null,
        meta: { ip: req.ip ?? null, userAgent: req.headers['user-agent']?.slice(0, 300) ?? null },
      });
      const { token, session } = await deps.sessions.create(
        signedIn.userId,
        signedIn.workspaceId,
        signedIn.role,
        { signIn: 'sso' },
      );
      setSessionCookie(reply, token, session.expiresAt, secure);
      return reply
        .header('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'")
        .header('Referrer-Policy', 'no-referrer')
        .type('text/html; charset=utf-8')
        .send(CONTINUE_PAGE);
    },
  );
}
