import type { FieldError } from '../../lib/errors.js';

/**
 * The rules of a risk acceptance (docs/cases.md#risk-acceptance): moving a case to
 * `risk_accepted` names when the acceptance ends (`expiresAt`, in the future and at most the
 * policy's maximum away) and why (a note). On expiry the case reopens (`expireAcceptances`).
 */

/** The longest acceptance when the workspace's policy names none. */
export const DEFAULT_MAX_ACCEPTANCE_DAYS = 365;

const DAY_MS = 86_400_000;

/** What a change of status asks for, as the request gives it. */
export interface AcceptanceRequest {
  status?: string;
  note?: string | null;
  expiresAt?: string;
}

/**
 * The problems of `req` under the rules above, as field errors (empty when it may be applied).
 * `expiresAt` without `risk_accepted` is refused too: it would say something the case will not do.
 */
export function acceptanceErrors(
  req: AcceptanceRequest,
  now: Date,
  maxDays: number,
  path = '',
): FieldError[] {
  if (req.status !== 'risk_accepted') {
    return req.expiresAt === undefined
      ? []
      : [{ path: `${path}/expiresAt`, message: 'is only taken with status risk_accepted' }];
  }
  const errors: FieldError[] = [];
  if (!req.note?.trim()) errors.push({ path: `${path}/note`, message: 'is required to accept a risk' });
  if (req.expiresAt === undefined) {
    errors.push({ path: `${path}/expiresAt`, message: 'is required to accept a risk' });
    return errors;
  }
  const at = Date.parse(req.expiresAt);
  if (Number.isNaN(at)) errors.push({ path: `${path}/expiresAt`, message: 'must be an ISO 8601 date-time' });
  else if (at <= now.getTime()) errors.push({ path: `${path}/expiresAt`, message: 'must be in the future' });
  else if (at > now.getTime() + maxDays * DAY_MS) {
    errors.push({
      path: `${path}/expiresAt`,
      message: `must be at most ${maxDays} days from now (the workspace's longest risk acceptance)`,
    });
  }
  return errors;
}

/** The expiry a tracker's "won't fix" gets: the policy's longest (docs/workflows.md#status-flowing-back). */
export function longestAcceptanceFrom(now: Date, maxDays: number): Date {
  return new Date(now.getTime() + maxDays * DAY_MS);
}
