import { AppError } from '../../lib/errors.js';
import { nextMonthStart } from '../plans/plans.js';
import { rateLimitHeaders } from '../usage/rate-limiter.js';

/**
 * 429 `monthly_limit_exceeded` (DECISIONS §3). A single request is refused only when no call is
 * left; a batch is refused whole when it asks more than is left, so its refusal says how many
 * remain and how many it asked (a workspace with 1 of its 100 calls left has not "used its 100").
 */
export function quotaRefusal(
  now: Date,
  limit: number,
  batch?: { asked: number; remaining: number },
): AppError {
  const resetMs = nextMonthStart(now).getTime() - now.getTime();
  const detail = batch
    ? `This workspace has ${batch.remaining} of its ${limit} AI calls left for this month; the batch asks for ${batch.asked}.`
    : `This workspace has used its ${limit} AI calls for this month.`;
  return new AppError('monthly_limit_exceeded', detail, {
    headers: rateLimitHeaders({ allowed: false, limit, remaining: 0, resetMs }),
  });
}
