import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { Caller } from '../../domain/workspaces/members.js';
import { requireRole, SESSION_COOKIE, setSessionCookie } from '../plugins/console-session.js';
import {
  joined,
  memberList,
  memberView,
  noContent,
  ownershipBody,
  roleBody,
  switchBody,
  userIdParams,
  workspaceList,
} from '../schemas/members.js';
import { noQuery } from '../schemas/common.js';
import { SESSION_ROUTE_ERRORS, responses } from '../schemas/responses.js';
import { actorFrom } from './key-management.js';
import { typed } from '../typed-app.js';

const BODY_ERRORS = [...SESSION_ROUTE_ERRORS, 413, 415];
const BY_ID_ERRORS = [...BODY_ERRORS, 404, 409];

/** The signed-in member as the members services take them. */
export function callerOf(req: FastifyRequest): Caller {
  return {
    workspaceId: req.session.workspaceId,
    userId: req.session.userId,
    role: req.session.role,
    actor: actorFrom(req, `user:${req.session.userId}`),
  };
}

/** A member id from the path: anything but a UUID is as unknown as another workspace's. */
function memberId(id: string): string {
  if (!isUuid(id)) throw notFound('member');
  return id;
}

/**
 * Settings > Members as JSON and the workspace switcher (docs/console.md#members-and-roles):
 * list, change a role, remove (or leave), transfer ownership; the person's workspaces and the
 * switch between them.
 */
export function consoleMemberRoutes(
  untyped: FastifyInstance,
  deps: Pick<AppDeps, 'config' | 'members' | 'sessions'>,
): void {
  const app = typed(untyped);

  app.get(
    '/members',
    {
      config: requireRole('viewer'),
      schema: {
        summary: "The workspace's members",
        querystring: noQuery,
        response: responses({ 200: memberList }, SESSION_ROUTE_ERRORS),
      },
    },
    async (req) => ({ object: 'list', data: await deps.members.list(req.session.workspaceId) }),
  );

  app.patch(
    '/members/:userId',
    {
      config: requireRole('admin'),
      bodyLimit: 1024,
      schema: {
        summary: "Change a member's role",
        params: userIdParams,
        body: roleBody,
        response: responses({ 200: memberView }, BY_ID_ERRORS),
      },
    },
    async (req) => deps.members.changeRole(callerOf(req), memberId(req.params.userId), req.body.role),
  );

  app.delete(
    '/members/:userId',
    {
      // Anyone may leave; removing another member needs an admin (checked in the domain).
      config: requireRole('viewer'),
      schema: {
        summary: 'Remove a member, or leave the workspace',
        params: userIdParams,
        response: responses({ 204: noContent }, BY_ID_ERRORS),
      },
    },
    async (req, reply) => {
      await deps.members.remove(callerOf(req), memberId(req.params.userId));
      return reply.code(204).send();
    },
  );

  app.post(
    '/ownership',
    {
      config: requireRole('owner'),
      bodyLimit: 1024,
      schema: {
        summary: 'Hand ownership to another member (you stay an admin)',
        body: ownershipBody,
        response: responses({ 204: noContent }, BY_ID_ERRORS),
      },
    },
    async (req, reply) => {
      await deps.members.transferOwnership(callerOf(req), memberId(req.body.userId));
      return reply.code(204).send();
    },
  );

  app.get(
    '/workspaces',
    {
      config: requireRole('viewer'),
      schema: {
        summary: 'Your workspaces',
        querystring: noQuery,
        response: responses({ 200: workspaceList }, SESSION_ROUTE_ERRORS),
      },
    },
    async (req) => ({
      object: 'list',
      data: (await deps.members.workspacesOf(req.session.userId)).map((w) => ({
        ...w,
        current: w.id === req.session.workspaceId,
      })),
    }),
  );

  app.post(
    '/workspace',
    {
      config: requireRole('viewer'),
      bodyLimit: 1024,
      schema: {
        summary: 'Switch to another of your workspaces (a new session)',
        body: switchBody,
        response: responses({ 200: joined }, [...BODY_ERRORS, 404]),
      },
    },
    async (req, reply) => {
      const { workspaceId } = req.body;
      if (!isUuid(workspaceId)) throw notFound('workspace');
      const from = req.session;
      const role = await deps.members.switchRole(from, workspaceId);
      // The new session ends when the one it replaces would have: a switch never lengthens a sign-in.
      const { token, session } = await deps.sessions.create(from.userId, workspaceId, role, {
        signIn: workspaceId === from.workspaceId ? from.signIn : 'password',
        expiresAt: from.expiresAt,
      });
      const old = req.cookies[SESSION_COOKIE];
      if (old) await deps.sessions.destroy(old);
      setSessionCookie(reply, token, session.expiresAt, deps.config.cookieSecure);
      return { workspaceId, csrfToken: session.csrfToken };
    },
  );
}
