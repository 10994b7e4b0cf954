import { describedPattern } from '../../lib/schema-patterns.js';
import {
  ASSET_CRITICALITIES,
  ASSET_ENVIRONMENTS,
  ASSET_TYPES,
  SEVERITIES,
} from '../../domain/triage-engine/types.js';
import {
  BATCH_MAX_ITEMS,
  CVE_ID_PATTERN,
  TRIAGE_REQUEST_LIMITS as L,
  WEBHOOK_URL_MAX_LENGTH,
} from '../../domain/triage/triage-requests.js';

/**
 * Request schemas of the triage routes (docs/triage.md#request-and-answer), built from the triage
 * domain's constants and compiled by the app's strict Ajv like every other route: unknown
 * fields (a `model` too: the caller cannot choose it, docs/triage.md#request-and-answer) are refused, nothing is coerced.
 * The rules a schema cannot say are the domain's (`domain/triage/triage-requests.ts`).
 */

/** Schema of `asset` (docs/triage.md#request-and-answer): every field optional, unknown fields refused. */
const asset = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: L.assetNameMaxLength },
    type: { type: 'string', enum: [...ASSET_TYPES] },
    environment: { type: 'string', enum: [...ASSET_ENVIRONMENTS] },
    criticality: { type: 'string', enum: [...ASSET_CRITICALITIES] },
    internetExposed: { type: 'boolean' },
  },
} as const;

/** Body of `POST /api/v1/triage`. */
export const triageRequestBody = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'severity'],
  properties: {
    cveIds: {
      type: 'array',
      maxItems: L.cveIdsMaxItems,
      uniqueItems: true,
      items: {
        type: 'string',
        maxLength: L.cveIdMaxLength,
        pattern: describedPattern(CVE_ID_PATTERN, 'must be a CVE id such as CVE-2021-44228'),
      },
    },
    title: { type: 'string', minLength: 1, maxLength: L.titleMaxLength },
    severity: { type: 'string', enum: [...SEVERITIES] },
    description: { type: 'string', minLength: 1, maxLength: L.descriptionMaxLength },
    asset,
    cvssScore: { type: 'number', minimum: 0, maximum: 10 },
    cvssVector: { type: 'string', minLength: 1, maxLength: L.cvssVectorMaxLength },
  },
  examples: [
    {
      cveIds: ['CVE-2021-44228'],
      title: 'Log4Shell in billing-api',
      severity: 'CRITICAL',
      asset: { name: 'billing-api', type: 'APPLICATION', environment: 'PRODUCTION', internetExposed: true },
    },
  ],
} as const;

/** Body of `POST /api/v1/triage/batch`; the plan's own item limit and webhook hosts are checked by the domain. */
export const batchRequestBody = {
  type: 'object',
  additionalProperties: false,
  required: ['items'],
  properties: {
    items: { type: 'array', minItems: 1, maxItems: BATCH_MAX_ITEMS, items: triageRequestBody },
    webhookUrl: { type: 'string', minLength: 1, maxLength: WEBHOOK_URL_MAX_LENGTH },
  },
  examples: [
    {
      items: [
        { cveIds: ['CVE-2021-44228'], title: 'Log4Shell', severity: 'CRITICAL' },
        { cveIds: ['CVE-2022-3602'], title: 'OpenSSL punycode overflow', severity: 'HIGH' },
      ],
      webhookUrl: 'https://ci.example/hook',
    },
  ],
} as const;

/**
 * Path of `GET /api/v1/triage/batch/:id`. Any string: an id that is no batch's UUID is an
 * unknown id, 404 and never 400 (docs/api.md#errors).
 */
export const batchIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string' } },
} as const;

/** Query of `GET /api/v1/triage/batch/:id`. */
export const batchItemsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    cursor: { type: 'string', maxLength: 40 },
    limit: { type: 'integer', minimum: 1, maximum: 500 },
  },
} as const;
