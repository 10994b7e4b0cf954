import { AppError } from '../../lib/errors.js';
import { nextMonthStart } from '../plans/plans.js';

/**
 * 429 `monthly_limit_exceeded`. A single request is refused only when no call is left; a batch
 * is refused whole when it asks more than is left, so its refusal says how many remain and how
 * many it asked (a workspace with 1 of its 100 calls left has not "used its 100").
 *
 * It carries `Retry-After` (the month's end) and no `RateLimit-*` fields of its own: those
 * describe the key's request rate, set by the API-key gate, and a monthly "remaining: 0" there
 * would contradict a batch refusal that says calls remain (docs/api.md#plans-and-quotas).
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
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(resetMs / 1000))) },
  });
}
