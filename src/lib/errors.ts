/**
 * The closed set of error codes of docs/api.md#errors and the HTTP status each maps to.
 * One table, so a code can never drift to another status in one corner of the code.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  key_expired: 401,
  key_revoked: 401,
  unauthenticated: 401,
  sso_failed: 401,
  insufficient_scope: 403,
  insufficient_role: 403,
  plan_required: 403,
  workspace_suspended: 403,
  csrf_failed: 403,
  sso_required: 403,
  sign_in_required: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  idempotency_conflict: 409,
  conflict: 409,
  reveal_expired: 410,
  link_expired: 410,
  invitation_expired: 410,
  reset_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unsupported_format: 415,
  unparseable_scan: 422,
  confirmation_mismatch: 422,
  case_change_refused: 422,
  rate_limited: 429,
  monthly_limit_exceeded: 429,
  header_too_large: 431,
  internal_error: 500,
  triage_unavailable: 503,
  overloaded: 503,
  sso_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_TITLES: Record<ErrorCode, string> = {
  invalid_request: 'Invalid request',
  missing_api_key: 'Missing API key',
  invalid_api_key: 'Invalid API key',
  key_expired: 'API key expired',
  key_revoked: 'API key revoked',
  unauthenticated: 'Not signed in',
  sso_failed: 'Single sign-on failed',
  insufficient_scope: 'Insufficient scope',
  insufficient_role: 'Insufficient role',
  plan_required: 'Plan required',
  workspace_suspended: 'Workspace suspended',
  csrf_failed: 'CSRF check failed',
  sso_required: 'Single sign-on required',
  sign_in_required: 'Sign-in required',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  request_timeout: 'Request timeout',
  idempotency_conflict: 'Idempotency conflict',
  conflict: 'Conflict',
  reveal_expired: 'Reveal link expired',
  link_expired: 'Download link expired',
  invitation_expired: 'Invitation expired',
  reset_expired: 'Reset link expired',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  unsupported_format: 'Unsupported scan format',
  unparseable_scan: 'Unparseable scan',
  confirmation_mismatch: 'Confirmation does not match',
  case_change_refused: 'Case change refused',
  rate_limited: 'Rate limited',
  monthly_limit_exceeded: 'Monthly AI-call limit exceeded',
  header_too_large: 'Request header fields too large',
  internal_error: 'Internal server error',
  triage_unavailable: 'Triage unavailable',
  overloaded: 'Overloaded',
  sso_unavailable: 'Identity provider unavailable',
};

export interface FieldError {
  /** JSON Pointer to the offending field, e.g. `/asset/type`. */
  path: string;
  message: string;
}

/**
 * An error that is safe to show: `detail` is written for the caller and never carries
 * secrets, SQL or stack traces. `headers` are added to the response (e.g. Retry-After).
 */
export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly options: { errors?: FieldError[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(detail, { cause: options.cause });
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }
}

export const notFound = (what = 'resource'): AppError => new AppError('not_found', `No such ${what}.`);

export const INVALID_FIELDS_DETAIL = 'The request has invalid fields; see errors.';

/** 400 `invalid_request` listing every bad field (docs/api.md#errors). */
export const invalidRequest = (errors: FieldError[]): AppError =>
  new AppError('invalid_request', INVALID_FIELDS_DETAIL, { errors });
