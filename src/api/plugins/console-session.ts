import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.js';
import { safeEqual } from '../../domain/keys/key-secrets.js';
import type { Session, SessionStore } from '../../domain/workspaces/sessions.js';
import { roleAtLeast, type Role } from '../../domain/workspaces/roles.js';

declare module 'fastify' {
  interface FastifyRequest {
    session: Session;
  }
  interface FastifyContextConfig {
    /** Console routes that work without a session (sign-up, login). */
    public?: boolean;
    /**
     * The least role a console route needs (docs/console.md#members-and-roles); set it with
     * {@link requireRole}. A route that names none needs `viewer` to read and `admin` to write.
     */
    role?: Role;
  }
}

/**
 * The route `config` of a console route that needs `role` or more:
 * `app.post('/thing', { config: requireRole('admin'), schema }, …)`. Below it the answer is
 * 403 `insufficient_role`; the API-key surface ignores it (keys keep their scopes).
 */
export function requireRole(role: Role): { role: Role } {
  return { role };
}

/** The role a route needs: its own, or by its method when it names none (writes fail closed). */
function neededRole(req: FastifyRequest): Role {
  const declared = req.routeOptions.config.role;
  if (declared) return declared;
  return req.method === 'GET' || req.method === 'HEAD' ? 'viewer' : 'admin';
}

/** 403 `insufficient_role` unless the session's role is at least the route's. */
function checkRole(req: FastifyRequest, session: Session): void {
  const needed = neededRole(req);
  if (!roleAtLeast(session.role, needed)) {
    throw new AppError(
      'insufficient_role',
      `This needs the ${needed} role or higher in this workspace; you are ${article(session.role)} ${session.role}.`,
    );
  }
}

function article(role: Role): string {
  return role === 'admin' || role === 'owner' ? 'an' : 'a';
}

export const SESSION_COOKIE = 'svc_session';
export const CSRF_HEADER = 'x-csrf-token';

export function setSessionCookie(reply: FastifyReply, token: string, expiresAt: Date, secure: boolean): void {
  void reply.setCookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'strict',
    secure,
    path: '/',
    expires: expiresAt,
  });
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  void reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', secure, path: '/' });
}

/**
 * A second line behind the CSRF token (docs/console.md#sessions-and-security): a browser names the page that
 * sent a state change in `Origin`; one from another origin (or the opaque `null`) is
 * refused, sign-up and login included. Callers that send no `Origin` (curl, scripts) are
 * not browsers and still need the session's CSRF token.
 */
function refuseCrossOrigin(req: FastifyRequest): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  // Both sides through URL, so a default port written or left out compares equal.
  let same = false;
  try {
    const url = new URL(origin);
    same =
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      url.host === new URL(`${url.protocol}//${req.host}`).host;
  } catch {
    same = false;
  }
  if (!same) {
    throw new AppError('csrf_failed', 'The request came from another site (its Origin is not this console).');
  }
}

/**
 * Console session gate: a valid session cookie on every route but the public ones, on
 * every state-changing method the session's CSRF token in `X-CSRF-Token` (double submit:
 * a cross-site form can send the cookie but cannot read or set the header), then the role the
 * route needs.
 */
export function consoleSession(app: FastifyInstance, sessions: SessionStore): void {
  app.decorateRequest('session', null as unknown as Session);
  app.addHook('onRequest', async (req: FastifyRequest) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') refuseCrossOrigin(req);
    if (req.routeOptions.config.public) return;
    const token = req.cookies[SESSION_COOKIE];
    const session = token ? await sessions.find(token) : null;
    if (!session) throw new AppError('unauthenticated', 'Sign in to the console first.');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const sent = req.headers[CSRF_HEADER];
      if (typeof sent !== 'string' || !safeEqual(sent, session.csrfToken)) {
        throw new AppError(
          'csrf_failed',
          'The X-CSRF-Token header is missing or does not match this session.',
        );
      }
    }
    checkRole(req, session);
    req.session = session;
  });
}
