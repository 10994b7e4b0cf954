import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps.js';
import { AppError } from '../../lib/errors.js';
import { rateLimitHeaders } from '../../domain/usage/rate-limiter.js';
import { accepted202, noContent, resetBody, resetRequestBody, tokenParams } from '../schemas/members.js';
import { PUBLIC_ROUTE_ERRORS, problemResponse, responses } from '../schemas/responses.js';
import { typed } from '../typed-app.js';

/** Requests per hour for one account, and from one address (docs/console.md#password-reset). */
const RESETS_PER_HOUR_PER_ACCOUNT = 3;
const RESETS_PER_HOUR_PER_IP = 10;
const COMPLETIONS_PER_MINUTE_PER_IP = 10;

/**
 * Password reset by email (docs/console.md#password-reset). Asking answers 202 before anything
 * is looked up, so the answer and its timing are the same whether or not the address has an
 * account; the link (30 minutes, once) goes out afterwards.
 */
export function consolePasswordResetRoutes(
  untyped: FastifyInstance,
  deps: Pick<AppDeps, 'passwordResets' | 'rateLimiter'>,
): void {
  const app = typed(untyped);

  async function limit(bucket: string, max: number, windowMs: number): Promise<void> {
    const d = await deps.rateLimiter.hit(bucket, max, windowMs);
    if (!d.allowed) {
      throw new AppError('rate_limited', 'Too many attempts; wait and try again.', {
        headers: rateLimitHeaders(d),
      });
    }
  }

  const actorOf = (req: { ip: string; headers: Record<string, unknown> }) => ({
    ip: req.ip ?? null,
    userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'].slice(0, 300) : null,
  });

  app.post(
    '/password-reset',
    {
      config: { public: true },
      bodyLimit: 4096,
      schema: {
        summary: 'Ask for a password reset link by email (202 whether or not the address has an account)',
        body: resetRequestBody,
        response: responses({ 202: accepted202 }, [...PUBLIC_ROUTE_ERRORS, 413, 415, 429]),
      },
    },
    async (req, reply) => {
      const email = req.body.email.trim();
      await limit(`reset-ip:${req.ip}`, RESETS_PER_HOUR_PER_IP, 3_600_000);
      await limit(`reset:${email.toLowerCase()}`, RESETS_PER_HOUR_PER_ACCOUNT, 3_600_000);
      void deps.passwordResets.request(email, actorOf(req));
      return reply.code(202).send();
    },
  );

  app.post(
    '/password-reset/:token',
    {
      config: { public: true },
      bodyLimit: 4096,
      schema: {
        summary: 'Set a new password with a reset link (every session of the account ends)',
        params: tokenParams,
        body: resetBody,
        response: responses(
          { 204: noContent, 410: problemResponse(410, 'Unknown, used, or older than 30 minutes') },
          [...PUBLIC_ROUTE_ERRORS, 413, 415, 429],
        ),
      },
    },
    async (req, reply) => {
      await limit(`reset-use:${req.ip}`, COMPLETIONS_PER_MINUTE_PER_IP, 60_000);
      await deps.passwordResets.complete(req.params.token, req.body.password, actorOf(req));
      return reply.code(204).send();
    },
  );
}
