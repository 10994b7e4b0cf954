import { describedPattern } from '../../lib/schema-patterns.js';
import { SCOPES } from '../../domain/keys/scopes.js';
import { MAX_GRACE_HOURS } from '../../domain/keys/key-lifecycle.js';

/** Request schemas for key management, shared by the console and `/api/v1/keys`. */
export const createKeyBody = {
  type: 'object',
  additionalProperties: false,
  required: ['label', 'scopes'],
  properties: {
    label: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      // A label is shown beside masked secrets: bidi controls could make it read as another key's.
      pattern: describedPattern(
        '^[^\\u202A-\\u202E\\u2066-\\u2069\\u200E\\u200F]*$',
        'must not contain bidirectional control characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F)',
      ),
    },
    scopes: {
      type: 'array',
      minItems: 1,
      maxItems: SCOPES.length,
      uniqueItems: true,
      items: { type: 'string', enum: [...SCOPES] },
    },
    // One rule, one message: the route reads the value with parseExpiry, which says once what
    // is allowed ("never", 30/60/90/180/365 days, a future ISO date), instead of an anyOf whose
    // every branch answered with its own raw message (docs/api.md#errors).
    expiresIn: {
      description: '"never", a number of days, or a future ISO 8601 date',
      maxLength: 40,
    },
  },
} as const;

export const rotateKeyBody = {
  type: 'object',
  additionalProperties: false,
  properties: { graceHours: { type: 'integer', minimum: 0, maximum: MAX_GRACE_HOURS } },
} as const;

export const emptyBody = { type: 'object', additionalProperties: false, properties: {} } as const;

export const keyIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', maxLength: 100 } },
} as const;
