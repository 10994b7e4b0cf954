import type { FastifyRequest } from 'fastify';
import type { Scope } from '../../domain/keys/scopes.js';
import { roleForScopes, type Role } from '../../domain/workspaces/roles.js';
import { requireRole } from '../plugins/console-session.js';
import type { Actor } from '../../domain/keys/key-service.js';
import { KEY_ROUTE_ERRORS, SESSION_ROUTE_ERRORS } from '../schemas/responses.js';

/**
 * The two ways a caller reaches a workspace's resources. A resource's routes are written once
 * and registered under each: `/api/v1` behind an API key, whose scopes each route names, and
 * `/api/console` behind the session cookie and its CSRF token, whose member may do what their
 * role allows. A surface says how to find the caller's workspace and who
 * the caller is; the handlers never ask which surface they run on.
 */
export interface Surface {
  readonly kind: 'api' | 'console';
  /** The workspace the request acts on: the key's, or the signed-in user's. */
  workspaceOf(req: FastifyRequest): string;
  /** Who acts, as audit logs and status histories record it: `key:<id>` or `user:<id>`. */
  actorOf(req: FastifyRequest): string;
  /** The key the request is made with (an export job records it); the console uses none. */
  keyOf(req: FastifyRequest): string | null;
  /** The problem statuses any route of the surface may answer (401, 403, 429 ...). */
  readonly errors: readonly number[];
  /**
   * The route `config` that requires `scope`: the API checks the key's scopes, the console the
   * role that may do as much (docs/console.md#members-and-roles).
   */
  needs(scope: Scope | readonly Scope[]): { scope?: Scope | readonly Scope[]; role?: Role };
}

/** `/api/v1` and `/api/pipeline`: the API key of `plugins/api-key-auth.ts`. */
export const apiSurface: Surface = {
  kind: 'api',
  workspaceOf: (req) => req.apiKey.workspace.id,
  actorOf: (req) => `key:${req.apiKey.id}`,
  keyOf: (req) => req.apiKey.id,
  errors: KEY_ROUTE_ERRORS,
  needs: (scope) => ({ scope }),
};

/** `/api/console`: the session of `plugins/console-session.ts`. */
export const consoleSurface: Surface = {
  kind: 'console',
  workspaceOf: (req) => req.session.workspaceId,
  actorOf: (req) => `user:${req.session.userId}`,
  keyOf: () => null,
  errors: SESSION_ROUTE_ERRORS,
  needs: (scope) => requireRole(roleForScopes(scope)),
};

/** Who acts, with the address and user agent an audit event records. */
export function actorFrom(req: FastifyRequest, actor: string): Actor {
  return { actor, ip: req.ip ?? null, userAgent: req.headers['user-agent']?.slice(0, 300) ?? null };
}
