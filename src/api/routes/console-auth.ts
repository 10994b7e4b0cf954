import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { AppError } from '../../lib/errors.js';
import { rateLimitHeaders } from '../../domain/usage/rate-limiter.js';
import {
  clearSessionCookie,
  requireRole,
  SESSION_COOKIE,
  setSessionCookie,
} from '../plugins/console-session.js';
import { loginBody, revealParams, signupBody } from '../schemas/console.js';
import { noQuery } from '../schemas/common.js';
import { loggedIn, loggedOut, sessionView, signedUp } from '../schemas/console-responses.js';
import { keyRevealed } from '../schemas/keys-responses.js';
import {
  PUBLIC_ROUTE_ERRORS,
  SESSION_ROUTE_ERRORS,
  problemResponse,
  responses,
} from '../schemas/responses.js';

/** Sign-up and login: refused input, an oversized or non-JSON body, too many attempts. */
const PUBLIC_BODY_ERRORS = [...PUBLIC_ROUTE_ERRORS, 413, 415, 429];
import { actorFrom } from './key-management.js';
import { typed } from '../typed-app.js';

const LOGIN_ATTEMPTS_PER_MINUTE = 10;
const SIGNUPS_PER_HOUR_PER_IP = 20;

/** Sign-up, login, logout, the session probe and the one-time reveal (docs/console.md#sessions-and-security). */
export function consoleAuthRoutes(
  untyped: FastifyInstance,
  deps: Pick<AppDeps, 'config' | 'keys' | 'rateLimiter' | 'sessions' | 'sso' | 'workspaces'>,
): void {
  const app = typed(untyped);
  const secure = deps.config.cookieSecure;
  const publicRoute = { public: true };

  async function limit(bucket: string, max: number, windowMs: number): Promise<void> {
    const d = await deps.rateLimiter.hit(bucket, max, windowMs);
    if (!d.allowed) {
      throw new AppError('rate_limited', 'Too many attempts; wait and try again.', {
        headers: rateLimitHeaders(d),
      });
    }
  }

  app.post(
    '/signup',
    {
      config: publicRoute,
      bodyLimit: 8 * 1024,
      schema: {
        summary: 'Sign up: a workspace, its first key and a session',
        body: signupBody,
        response: responses({ 201: signedUp }, [...PUBLIC_BODY_ERRORS, 409]),
      },
    },
    async (req, reply) => {
      await limit(`signup:${req.ip}`, SIGNUPS_PER_HOUR_PER_IP, 3_600_000);
      const { body } = req;
      const { userId, workspace, firstKey } = await deps.workspaces.signup({
        email: body.email.trim(),
        password: body.password,
        workspaceName: body.workspaceName.trim(),
        plan: body.plan,
        ip: req.ip ?? null,
        userAgent: req.headers['user-agent']?.slice(0, 300) ?? null,
      });
      const { token, session } = await deps.sessions.create(userId, workspace.id, 'owner');
      setSessionCookie(reply, token, session.expiresAt, secure);
      void reply.code(201).header('Cache-Control', 'no-store');
      return {
        workspace: {
          id: workspace.id,
          name: workspace.name,
          plan: workspace.plan,
          trialEndsAt: workspace.trialEndsAt?.toISOString() ?? null,
        },
        revealUrl: `/reveal/${firstKey.revealToken}`,
        csrfToken: session.csrfToken,
      };
    },
  );

  app.post(
    '/login',
    {
      config: publicRoute,
      bodyLimit: 8 * 1024,
      schema: {
        summary: 'Sign in',
        body: loginBody,
        response: responses({ 200: loggedIn }, [...PUBLIC_BODY_ERRORS, 401, 403]),
      },
    },
    async (req, reply) => {
      const { body } = req;
      // Per address and per account, so neither a single client nor a distributed guesser gets far.
      await limit(`login-ip:${req.ip}`, LOGIN_ATTEMPTS_PER_MINUTE * 3, 60_000);
      await limit(`login:${body.email.trim().toLowerCase()}`, LOGIN_ATTEMPTS_PER_MINUTE, 60_000);
      const found = await deps.workspaces.checkLogin(body.email.trim(), body.password);
      if (!found) throw new AppError('unauthenticated', 'The email or password is not right.');
      // Asked only once the password is right, so a guesser learns nothing of the workspace.
      const opens = await deps.sso.passwordWorkspace(found.userId);
      if (opens === null) {
        throw new AppError('sso_required', 'This workspace requires single sign-on: use "Sign in with SSO".');
      }
      const { workspaceId, role } = opens;
      const { token, session } = await deps.sessions.create(found.userId, workspaceId, role);
      setSessionCookie(reply, token, session.expiresAt, secure);
      return { workspaceId, csrfToken: session.csrfToken };
    },
  );

  const logoutSchema = {
    summary: 'Sign out (needs `X-CSRF-Token` when signed in)',
    response: responses({ 204: loggedOut }, [...PUBLIC_ROUTE_ERRORS, 403]),
  };
  app.post('/logout', { config: publicRoute, schema: logoutSchema }, async (req: FastifyRequest, reply) => {
    const token = req.cookies[SESSION_COOKIE];
    if (token) {
      const session = await deps.sessions.find(token);
      // Logging out needs the CSRF token too, so another site cannot sign a person out.
      if (session && req.headers['x-csrf-token'] !== session.csrfToken) {
        throw new AppError(
          'csrf_failed',
          'The X-CSRF-Token header is missing or does not match this session.',
        );
      }
      await deps.sessions.destroy(token);
    }
    clearSessionCookie(reply, secure);
    return reply.code(204).send();
  });

  const sessionSchema = {
    summary: 'The current session',
    querystring: noQuery,
    response: responses({ 200: sessionView }, SESSION_ROUTE_ERRORS),
  };
  app.get('/session', { config: requireRole('viewer'), schema: sessionSchema }, async (req) => ({
    userId: req.session.userId,
    workspaceId: req.session.workspaceId,
    role: req.session.role,
    csrfToken: req.session.csrfToken,
    expiresAt: req.session.expiresAt.toISOString(),
  }));

  app.get(
    '/reveal/:token',
    {
      config: requireRole('admin'),
      schema: {
        summary: 'Reveal a new key once',
        params: revealParams,
        response: responses(
          { 200: keyRevealed, 410: problemResponse(410, 'Already revealed, or older than 15 minutes') },
          [...SESSION_ROUTE_ERRORS, 404],
        ),
      },
    },
    async (req, reply) => {
      const { token } = req.params;
      void reply.header('Cache-Control', 'no-store');
      return deps.keys.reveal({
        token,
        workspaceId: req.session.workspaceId,
        actor: actorFrom(req, `user:${req.session.userId}`),
      });
    },
  );
}
