/**
 * JSON Schemas (draft-07) of the triage request (spec §2.3, DECISIONS §6) and the batch request
 * (DECISIONS §7), plus pure checkers that report every failing field as `{path, message}`
 * (the `errors` member of DECISIONS §2's problem document).
 *
 * Fastify caveat (checked against @fastify/ajv-compiler's defaults): `removeAdditional: true`
 * silently strips unknown properties instead of rejecting them, and `coerceTypes: 'array'` turns
 * "9.8" into 9.8. DECISIONS §6 wants unknown fields rejected with 400, so the HTTP layer must set
 * `ajv.customOptions.removeAdditional = false` (and preferably `coerceTypes: false`) or run
 * {@link checkTriageRequest} on the raw body. `model` alone is refused under either setting
 * (it is listed with the schema `false`), because the caller cannot choose the model (spec §1).
 */
import { ASSET_CRITICALITIES, ASSET_ENVIRONMENTS, ASSET_TYPES, SEVERITIES } from './types.js';
import type { TriageRequest } from './types.js';
import { checkObject, type FieldError, type ObjectRule } from './schema-check.js';

export type { FieldError } from './schema-check.js';

/** Length limits; the 64 KiB body limit (DECISIONS §2) bounds the whole request anyway. */
export const TRIAGE_REQUEST_LIMITS = {
  titleMaxLength: 500,
  descriptionMaxLength: 20_000,
  assetNameMaxLength: 200,
  cvssVectorMaxLength: 200,
  cveIdsMaxItems: 100,
  cveIdMaxLength: 32,
} as const;

/** CVE-<year>-<number>, four or more digits (spec §2.3). */
export const CVE_ID_PATTERN = '^CVE-\\d{4}-\\d{4,}$';

const L = TRIAGE_REQUEST_LIMITS;

/** Schema of `asset` (spec §2.3): every field optional, unknown fields rejected. */
export const ASSET_SCHEMA = {
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

/**
 * Schema of the body of `POST /api/v1/triage`. The `anyOf` encodes DECISIONS §6:
 * "`cveIds` may be empty (or missing) only when `description` is given".
 */
export const TRIAGE_REQUEST_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  required: ['title', 'severity'],
  properties: {
    cveIds: {
      type: 'array',
      maxItems: L.cveIdsMaxItems,
      uniqueItems: true,
      items: { type: 'string', pattern: CVE_ID_PATTERN, maxLength: L.cveIdMaxLength },
    },
    title: { type: 'string', minLength: 1, maxLength: L.titleMaxLength },
    severity: { type: 'string', enum: [...SEVERITIES] },
    description: { type: 'string', minLength: 1, maxLength: L.descriptionMaxLength },
    asset: ASSET_SCHEMA,
    cvssScore: { type: 'number', minimum: 0, maximum: 10 },
    cvssVector: { type: 'string', minLength: 1, maxLength: L.cvssVectorMaxLength },
    // Listed only to be refused: under Fastify's default `removeAdditional: true` an unlisted
    // `model` would be silently stripped, and a caller must learn it cannot choose (spec §1).
    model: false,
  },
  anyOf: [
    { required: ['cveIds'], properties: { cveIds: { type: 'array', minItems: 1 } } },
    { required: ['description'], properties: { description: { type: 'string' } } },
  ],
} as const;

const ASSET_RULE: ObjectRule = {
  fields: {
    name: { kind: 'string', maxLength: L.assetNameMaxLength },
    type: { kind: 'enum', values: ASSET_TYPES },
    environment: { kind: 'enum', values: ASSET_ENVIRONMENTS },
    criticality: { kind: 'enum', values: ASSET_CRITICALITIES },
    internetExposed: { kind: 'boolean' },
  },
  required: [],
};

const REQUEST_RULE: ObjectRule = {
  fields: {
    cveIds: {
      kind: 'array',
      maxItems: L.cveIdsMaxItems,
      unique: true,
      item: { kind: 'string', pattern: new RegExp(CVE_ID_PATTERN), maxLength: L.cveIdMaxLength },
    },
    title: { kind: 'string', maxLength: L.titleMaxLength },
    severity: { kind: 'enum', values: SEVERITIES },
    description: { kind: 'string', maxLength: L.descriptionMaxLength },
    asset: { kind: 'object', rule: ASSET_RULE },
    cvssScore: { kind: 'number', minimum: 0, maximum: 10 },
    cvssVector: { kind: 'string', maxLength: L.cvssVectorMaxLength },
  },
  required: ['title', 'severity'],
};

/** Result of a pure check: the typed value, or every failing field. */
export type CheckResult<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

/**
 * Validates a parsed JSON body against the same rules as {@link TRIAGE_REQUEST_SCHEMA},
 * independent of ajv options, listing every failing field (DECISIONS §2 `invalid_request`).
 * @param path - JSON Pointer prefix, e.g. `/items/3` when checking a batch item.
 */
export function checkTriageRequest(body: unknown, path = ''): CheckResult<TriageRequest> {
  const errors = checkObject(body, REQUEST_RULE, path);
  if (errors.length === 0) {
    const b = body as TriageRequest;
    const hasCves = Array.isArray(b.cveIds) && b.cveIds.length > 0;
    if (!hasCves && b.description === undefined) {
      errors.push({
        path: `${path}/cveIds`,
        message: 'must contain at least one CVE id unless description is given',
      });
    }
  }
  return errors.length === 0 ? { ok: true, value: body as TriageRequest } : { ok: false, errors };
}
