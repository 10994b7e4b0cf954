import { describedPattern } from '../../lib/schema-patterns.js';
import { SCOPES } from '../../domain/keys/scopes.js';
import { EXPIRY_DAYS, MAX_GRACE_HOURS } from '../../domain/keys/key-lifecycle.js';

/** Request schemas for key management, shared by the console and `/api/v1/keys`. */
export const createKeyBody = {
  type: 'object',
  additionalProperties: false,
  required: ['label', 'scopes'],
  properties: {
    label: { type: 'string', minLength: 1, maxLength: 100 },
    scopes: {
      type: 'array',
      minItems: 1,
      maxItems: SCOPES.length,
      uniqueItems: true,
      items: { type: 'string', enum: [...SCOPES] },
    },
    expiresIn: {
      description: '"never", a number of days, or a future ISO 8601 date',
      anyOf: [
        { type: 'string', enum: ['never'] },
        { type: 'integer', enum: [...EXPIRY_DAYS] },
        {
          type: 'string',
          pattern: describedPattern('^\\d{4}-\\d{2}-\\d{2}', 'must be an ISO 8601 date'),
          maxLength: 40,
        },
        { type: 'null' },
      ],
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

export interface CreateKeyBody {
  label: string;
  scopes: string[];
  expiresIn?: 'never' | number | string | null;
}
