import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import type { Actor } from '../../domain/keys/key-service.js';
import { parseExpiry } from '../../domain/keys/key-lifecycle.js';
import { viewKey } from '../../domain/keys/key-view.js';
import { invalidRequest } from '../../lib/errors.js';
import { noQuery } from '../schemas/common.js';
import { fieldErrors } from '../plugins/problem.js';
import { createKeyBody, emptyBody, keyIdParams, rotateKeyBody } from '../schemas/keys.js';
import { keyCreated, keyList, keyRotated, keyView } from '../schemas/keys-responses.js';
import { KEY_ROUTE_ERRORS, SESSION_ROUTE_ERRORS, responses } from '../schemas/responses.js';
import { typed } from '../typed-app.js';
import { requireRole } from '../plugins/console-session.js';
import type { Role } from '../../domain/workspaces/roles.js';

/**
 * List, create, rotate and revoke keys (docs/api.md#keys). Mounted twice: in the console
 * (session, the new secret shown on the one-time reveal page) and under `/api/v1/keys`
 * (a `keys:write` key, the new secret in the answer). Each surface says how to find the
 * caller's workspace and actor, and whether new secrets go to the reveal page.
 */
export interface KeySurface {
  workspaceOf(req: FastifyRequest): string;
  actorOf(req: FastifyRequest): Actor;
  viaRevealPage: boolean;
  /** The API's scope for these routes. */
  scope?: 'keys:write';
  /** The console's role for these routes (docs/console.md#members-and-roles). */
  role?: Role;
}

export { actorFrom } from './surface.js';

/**
 * `expiresIn` of a create body read before the schema's verdict is acted on (the route attaches
 * validation errors instead of failing), so the body may be anything JSON allows.
 */
function expiresInOf(body: unknown): unknown {
  return typeof body === 'object' && body !== null && 'expiresIn' in body ? body.expiresIn : undefined;
}

export function registerKeyManagement(
  untyped: FastifyInstance,
  deps: Pick<AppDeps, 'clock' | 'keys' | 'usageReports' | 'workspaces'>,
  surface: KeySurface,
): void {
  const app = typed(untyped);
  const config: { scope?: 'keys:write'; role?: Role } = {
    ...(surface.scope ? { scope: surface.scope } : {}),
    ...(surface.role ? requireRole(surface.role) : {}),
  };
  const bodyLimit = 16 * 1024;
  const errors = surface.viaRevealPage ? SESSION_ROUTE_ERRORS : KEY_ROUTE_ERRORS;
  const bodyErrors = [...errors, 413, 415];
  const byId = [...bodyErrors, 404];

  async function rotationPolicy(workspaceId: string): Promise<number> {
    const ws = await deps.workspaces.workspaceOf(workspaceId);
    return ws.rotationPolicyDays;
  }

  function secretOut(created: { secret: string; revealToken: string | null }) {
    return surface.viaRevealPage ? { revealUrl: `/reveal/${created.revealToken}` } : { key: created.secret };
  }

  const listSchema = {
    summary: "The workspace's keys with their usage",
    querystring: noQuery,
    response: responses({ 200: keyList }, errors),
  };
  app.get('/keys', { config, schema: listSchema }, async (req) => {
    const workspaceId = surface.workspaceOf(req);
    const [keys, policy, totals] = await Promise.all([
      deps.keys.listKeys(workspaceId),
      rotationPolicy(workspaceId),
      deps.usageReports.perKeyTotals(workspaceId),
    ]);
    const now = deps.clock();
    return {
      object: 'list',
      data: keys.map((k) => ({
        ...viewKey(k, policy, now),
        usage: totals.get(k.id) ?? { requests: 0, tokens: 0, spendUsd: '0.000000' },
      })),
    };
  });

  // attachValidation: the schema's refusals and the expiry rule's are answered together, so a
  // body with a bad label and a bad expiry lists both, each field once (docs/api.md#errors).
  const createOptions = {
    config,
    bodyLimit,
    attachValidation: true,
    schema: {
      summary: 'Create a key',
      body: createKeyBody,
      response: responses({ 201: keyCreated }, bodyErrors),
    },
  };
  app.post('/keys', createOptions, async (req, reply) => {
    const now = deps.clock();
    const errors = req.validationError
      ? fieldErrors(req.validationError.validation as unknown as Parameters<typeof fieldErrors>[0], 'body')
      : [];
    const expiry = parseExpiry(expiresInOf(req.body), now);
    if ('error' in expiry) errors.push({ path: '/expiresIn', message: expiry.error });
    if (errors.length > 0 || 'error' in expiry) throw invalidRequest(errors);
    const body = req.body;
    const workspaceId = surface.workspaceOf(req);
    const created = await deps.keys.createKey({
      workspaceId,
      label: body.label,
      scopes: body.scopes,
      expiresAt: expiry.expiresAt,
      actor: surface.actorOf(req),
      reveal: surface.viaRevealPage,
    });
    void reply.code(201).header('Cache-Control', 'no-store');
    return { ...viewKey(created.key, await rotationPolicy(workspaceId), now), ...secretOut(created) };
  });

  app.post(
    '/keys/:id/rotate',
    {
      config,
      bodyLimit,
      schema: {
        summary: 'Rotate a key: a successor now, the old key until its grace ends',
        params: keyIdParams,
        body: rotateKeyBody,
        response: responses({ 201: keyRotated }, [...byId, 409]),
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const workspaceId = surface.workspaceOf(req);
      const { old, successor } = await deps.keys.rotateKey({
        workspaceId,
        keyId: id,
        graceHours: req.body.graceHours,
        actor: surface.actorOf(req),
        reveal: surface.viaRevealPage,
      });
      const policy = await rotationPolicy(workspaceId);
      const now = deps.clock();
      void reply.code(201).header('Cache-Control', 'no-store');
      return {
        rotated: viewKey(old, policy, now),
        successor: { ...viewKey(successor.key, policy, now), ...secretOut(successor) },
      };
    },
  );

  app.post(
    '/keys/:id/revoke',
    {
      config,
      bodyLimit,
      schema: {
        summary: 'Revoke a key, at once and for good',
        params: keyIdParams,
        body: emptyBody,
        response: responses({ 200: keyView }, byId),
      },
    },
    async (req) => {
      const { id } = req.params;
      const workspaceId = surface.workspaceOf(req);
      const key = await deps.keys.revokeKey({
        workspaceId,
        keyId: id,
        actor: surface.actorOf(req),
      });
      return viewKey(key, await rotationPolicy(workspaceId), deps.clock());
    },
  );
}
