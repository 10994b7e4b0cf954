import { ERROR_STATUS, ERROR_TITLES, type ErrorCode } from '../../lib/errors.js';

/**
 * The building blocks of every route's `schema.response` (docs/api.md#reference): the one problem-document
 * schema of docs/api.md#errors (shared, `$ref: 'Problem#'`, added to the app once), problem answers
 * per status naming the codes of `lib/errors.ts` that status carries, and small shapes reused
 * by the area files. Response schemas document and are checked in tests (`openapi.test.ts`);
 * they never drop a field from an answer: the app serialises with `JSON.stringify`
 * (`plugins/openapi.ts`), not with fast-json-stringify.
 */

export const PROBLEM_SCHEMA_ID = 'Problem';

const CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** RFC 9457 problem document (docs/api.md#errors): every error of this API has this shape. */
export const problemSchema = {
  $id: PROBLEM_SCHEMA_ID,
  type: 'object',
  description: 'An RFC 9457 problem document (`application/problem+json`). `errors` only for validation.',
  required: ['type', 'title', 'status', 'code', 'detail', 'requestId'],
  properties: {
    type: { type: 'string', description: '`https://docs.vulntriage.dev/errors/<code>`' },
    title: { type: 'string' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    code: { type: 'string', enum: CODES },
    detail: { type: 'string', description: 'A sentence for people; never secrets, SQL or stack traces.' },
    requestId: { type: 'string', description: 'Also in the `X-Request-Id` header.' },
    errors: {
      type: 'array',
      description: 'One entry per failing field (400 `invalid_request` and 422 `case_change_refused` only).',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: {
          path: { type: 'string', description: 'JSON Pointer: `/asset/type`, `/querystring/limit`' },
          message: { type: 'string' },
        },
      },
    },
  },
} as const;

/** A problem answer for `status`, listing the codes that status carries (lib/errors.ts). */
export function problemResponse(status: number, when?: string) {
  const codes = CODES.filter((c) => ERROR_STATUS[c] === status);
  const list = codes.map((c) => `\`${c}\` (${ERROR_TITLES[c]})`).join(', ');
  return {
    description: `${when ? `${when}. ` : ''}Problem document; \`code\`: ${list}.`,
    content: { 'application/problem+json': { schema: { $ref: `${PROBLEM_SCHEMA_ID}#` } } },
  };
}

/** The problem answers a route can give, by status. */
export function problems(statuses: readonly number[]): Record<number, ReturnType<typeof problemResponse>> {
  return Object.fromEntries(statuses.map((s) => [s, problemResponse(s)]));
}

/**
 * What any route behind an API key can answer besides its own refusals: a bad query or body (400),
 * no or a bad key (401), a missing scope or plan (403), the per-key rate limit (429), a bug (500),
 * a dependency down (503).
 */
export const KEY_ROUTE_ERRORS = [400, 401, 403, 429, 500, 503] as const;
/** Console routes: no session (401), a missing CSRF token (403), besides 400, 500, 503. */
export const SESSION_ROUTE_ERRORS = [400, 401, 403, 500, 503] as const;
/** Routes anyone may call. */
export const PUBLIC_ROUTE_ERRORS = [400, 500, 503] as const;

/** `schema.response` of a route: its own answers plus the problems of `errors`. */
export function responses(ok: Record<number, object>, errors: readonly number[]): Record<number, object> {
  return { ...problems(errors), ...ok };
}

export const isoDateTime = { type: 'string', format: 'date-time' } as const;
export const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;
export const nullableString = { type: ['string', 'null'] } as const;
export const nullableInteger = { type: ['integer', 'null'] } as const;
export const nullableNumber = { type: ['number', 'null'] } as const;
/** Exact decimal amounts travel as strings so no float ever rounds them. */
export const decimalString = { type: 'string', pattern: '^-?\\d+(\\.\\d+)?$' } as const;
export const cursor = {
  type: ['string', 'null'],
  description: 'Pass back as `cursor` for the next page; `null` on the last page.',
} as const;

/** `{"object": "list", "data": [...]}` (README: API), with `nextCursor` where paged. */
export function listOf(item: object, paged = true) {
  return {
    type: 'object',
    required: ['object', 'data', ...(paged ? ['nextCursor'] : [])],
    properties: {
      object: { type: 'string', const: 'list' },
      data: { type: 'array', items: item },
      ...(paged ? { nextCursor: cursor } : {}),
    },
  };
}
