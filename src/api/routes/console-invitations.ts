import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { rateLimitHeaders } from '../../domain/usage/rate-limiter.js';
import type { Session } from '../../domain/workspaces/sessions.js';
import { safeEqual } from '../../domain/keys/key-secrets.js';
import { CSRF_HEADER, requireRole, SESSION_COOKIE, setSessionCookie } from '../plugins/console-session.js';
import {
  acceptBody,
  invitationCreated,
  invitationIdParams,
  invitationList,
  invitationPreview,
  inviteBody,
  joined,
  noContent,
  tokenParams,
} from '../schemas/members.js';
import { noQuery } from '../schemas/common.js';
import {
  PUBLIC_ROUTE_ERRORS,
  SESSION_ROUTE_ERRORS,
  problemResponse,
  responses,
} from '../schemas/responses.js';
import { actorFrom } from './key-management.js';
import { callerOf } from './console-members.js';
import { typed } from '../typed-app.js';

const INVITATIONS_PER_HOUR = 100;
const ACCEPTS_PER_MINUTE_PER_IP = 10;
const gone = problemResponse(410, 'Used, revoked, or older than 7 days');

type Deps = Pick<AppDeps, 'config' | 'invitations' | 'rateLimiter' | 'sessions'>;

/**
 * Invitations (docs/console.md#invitations): an admin's create, list and revoke; the invited
 * person's look at the invitation and its acceptance, which work without a session (a new
 * person has none) or with one (a person already signed in joins a second workspace).
 */
export function consoleInvitationRoutes(untyped: FastifyInstance, deps: Deps): void {
  const app = typed(untyped);

  async function limit(bucket: string, max: number, windowMs: number): Promise<void> {
    const d = await deps.rateLimiter.hit(bucket, max, windowMs);
    if (!d.allowed) {
      throw new AppError('rate_limited', 'Too many attempts; wait and try again.', {
        headers: rateLimitHeaders(d),
      });
    }
  }

  app.post(
    '/invitations',
    {
      config: requireRole('admin'),
      bodyLimit: 4096,
      schema: {
        summary: 'Invite a person by email with a role (the link is shown once)',
        body: inviteBody,
        response: responses({ 201: invitationCreated }, [...SESSION_ROUTE_ERRORS, 409, 413, 415, 429]),
      },
    },
    async (req, reply) => {
      await limit(`invite:${req.session.workspaceId}`, INVITATIONS_PER_HOUR, 3_600_000);
      const created = await deps.invitations.create({
        workspaceId: req.session.workspaceId,
        email: req.body.email.trim(),
        role: req.body.role,
        by: req.session.role,
        actor: actorFrom(req, `user:${req.session.userId}`),
      });
      void reply.code(201).header('Cache-Control', 'no-store');
      return created;
    },
  );

  app.get(
    '/invitations',
    {
      config: requireRole('admin'),
      schema: {
        summary: 'Invitations not yet accepted, revoked or expired',
        querystring: noQuery,
        response: responses({ 200: invitationList }, SESSION_ROUTE_ERRORS),
      },
    },
    async (req) => ({ object: 'list', data: await deps.invitations.listOpen(req.session.workspaceId) }),
  );

  app.delete(
    '/invitations/:id',
    {
      config: requireRole('admin'),
      schema: {
        summary: 'Revoke an invitation',
        params: invitationIdParams,
        response: responses({ 204: noContent }, [...SESSION_ROUTE_ERRORS, 404]),
      },
    },
    async (req, reply) => {
      if (!isUuid(req.params.id)) throw notFound('invitation');
      await deps.invitations.revoke(callerOf(req), req.params.id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/invitations/:token',
    {
      config: { public: true },
      schema: {
        summary: 'Who invites, to which workspace, as what',
        params: tokenParams,
        querystring: noQuery,
        response: responses({ 200: invitationPreview, 410: gone }, [...PUBLIC_ROUTE_ERRORS, 404, 429]),
      },
    },
    async (req, reply) => {
      await limit(`invite-look:${req.ip}`, ACCEPTS_PER_MINUTE_PER_IP * 3, 60_000);
      void reply.header('Cache-Control', 'no-store');
      return deps.invitations.describe(req.params.token);
    },
  );

  /** The caller's session when the request carries one, with its CSRF token checked. */
  async function signedIn(req: FastifyRequest): Promise<Session | null> {
    const token = req.cookies[SESSION_COOKIE];
    const session = token ? await deps.sessions.find(token) : null;
    if (!session) return null;
    const sent = req.headers[CSRF_HEADER];
    if (typeof sent !== 'string' || !safeEqual(sent, session.csrfToken)) {
      throw new AppError('csrf_failed', 'The X-CSRF-Token header is missing or does not match this session.');
    }
    return session;
  }

  app.post(
    '/invitations/:token/accept',
    {
      config: { public: true },
      bodyLimit: 8 * 1024,
      schema: {
        summary: 'Accept: a new person with a password, or a person signed in or with their password',
        params: tokenParams,
        body: acceptBody,
        response: responses({ 201: joined, 410: gone }, [
          ...PUBLIC_ROUTE_ERRORS,
          401,
          403,
          404,
          409,
          413,
          415,
          429,
        ]),
      },
    },
    async (req, reply) => {
      await limit(`invite-accept:${req.ip}`, ACCEPTS_PER_MINUTE_PER_IP, 60_000);
      // A session another workspace's SSO made vouches for the person there only: it does not
      // carry them into this one (docs/console.md#sso-and-sessions); their password does.
      const signed = await signedIn(req);
      const session = signed?.signIn === 'password' ? signed : null;
      const accepted = await deps.invitations.accept({
        token: req.params.token,
        userId: session?.userId ?? null,
        password: session ? null : (req.body.password ?? null),
        actor: { ip: req.ip ?? null, userAgent: req.headers['user-agent']?.slice(0, 300) ?? null },
      });
      const created = await deps.sessions.create(accepted.userId, accepted.workspaceId, accepted.role);
      const old = req.cookies[SESSION_COOKIE];
      if (session && old) await deps.sessions.destroy(old);
      setSessionCookie(reply, created.token, created.session.expiresAt, deps.config.cookieSecure);
      void reply.code(201);
      return { workspaceId: accepted.workspaceId, csrfToken: created.session.csrfToken };
    },
  );
}
