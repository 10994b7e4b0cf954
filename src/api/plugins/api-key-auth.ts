import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.js';
import type { KeyVerifier, AuthenticatedKey } from '../../domain/keys/key-verifier.js';
import type { RequestMeter } from '../../domain/usage/request-meter.js';
import { rateLimitHeaders, type RateLimiter } from '../../domain/usage/rate-limiter.js';
import { effectivePlan, type EffectivePlan, type PlanCatalog } from '../../domain/plans/plans.js';
import type { Scope } from '../../domain/keys/scopes.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The key that authenticated this request (set on `/api/v1/*` and `/api/pipeline/*`). */
    apiKey: AuthenticatedKey;
    plan: EffectivePlan;
  }
  interface FastifyContextConfig {
    /**
     * The scope a route needs, or every scope of a list (case triage needs `cases:write` and
     * `triage:write`); absent means any valid key (e.g. `/api/v1/models`).
     */
    scope?: Scope | readonly Scope[];
  }
}

export interface ApiKeyAuthDeps {
  verifier: KeyVerifier;
  meter: RequestMeter;
  rateLimiter: RateLimiter;
  plans: PlanCatalog;
  clock: () => Date;
}

const DETAILS = {
  invalid_api_key: 'The API key is not valid.',
  key_expired: 'The API key has expired (or its rotation grace period has ended).',
  key_revoked: 'The API key has been revoked.',
} as const;

/**
 * The API-key gate for a route prefix (docs/api.md#keys): header, checksum, cache or lookup,
 * state, workspace status, scope, then the per-key rate limit of the plan. It runs on
 * `onRequest`, before the body is read, so nobody unauthenticated gets a body parsed.
 */
export function apiKeyAuth(app: FastifyInstance, deps: ApiKeyAuthDeps): void {
  app.decorateRequest('apiKey', null as unknown as AuthenticatedKey);
  app.decorateRequest('plan', null as unknown as EffectivePlan);
  app.addHook('onRequest', async (req: FastifyRequest, reply) => {
    const header = req.headers['x-api-key'];
    const secret = Array.isArray(header) ? header[0] : header;
    if (!secret) {
      const misplaced =
        req.headers.authorization?.includes('svc_') || /[?&](api[_-]?key|key)=/i.test(req.url);
      throw new AppError(
        'missing_api_key',
        misplaced
          ? 'Send the API key in the X-API-Key header, not in Authorization or the URL.'
          : 'This route needs an API key in the X-API-Key header.',
      );
    }
    const result = await deps.verifier.verify(secret.trim(), req.ip);
    if (!result.ok && result.code === 'rate_limited') {
      throw new AppError('rate_limited', 'Too many failed authentications from this address; retry later.', {
        headers: { 'Retry-After': String(Math.max(1, Math.ceil(result.retryAfterMs / 1000))) },
      });
    }
    if (!result.ok) throw new AppError(result.code, DETAILS[result.code]);
    const key = result.key;
    if (key.workspace.status !== 'active')
      throw new AppError('workspace_suspended', 'This workspace is suspended.');
    const needed = req.routeOptions.config.scope;
    const missing = needed === undefined ? [] : [needed].flat().filter((s) => !key.scopes.includes(s));
    if (missing.length > 0) {
      const all = [needed].flat();
      throw new AppError(
        'insufficient_scope',
        all.length === 1
          ? `This route needs a key with the ${all[0]} scope.`
          : `This route needs a key with the ${all.join(' and ')} scopes.`,
      );
    }
    const now = deps.clock();
    const plan = effectivePlan(key.workspace, deps.plans, now);
    const decision = await deps.rateLimiter.hit(`key:${key.id}`, plan.limits.requestsPerMinute);
    const headers = rateLimitHeaders(decision);
    if (!decision.allowed) {
      throw new AppError(
        'rate_limited',
        `This key may make ${decision.limit} requests a minute on its plan; retry after the reset.`,
        { headers },
      );
    }
    void reply.headers(headers);
    deps.meter.record(key.id, key.workspace.id, now);
    req.apiKey = key;
    req.plan = plan;
  });
}
