import { AUDIT_ACTIONS } from '../../db/entities/index.js';
import { describedPattern } from '../../lib/schema-patterns.js';

/** `GET /api/v1/audit-events` (docs/api.md#audit-log): filters and keyset paging; unknown parameters are 400. */
const when = {
  type: 'string',
  maxLength: 40,
  pattern: describedPattern(
    '^\\d{4}-\\d{2}-\\d{2}(T[0-9:.]+(Z|[+-]\\d{2}:\\d{2}))?$',
    'must be a date (YYYY-MM-DD, UTC) or an ISO 8601 instant with a time zone',
  ),
} as const;

export const auditEventsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    key: {
      type: 'string',
      pattern: describedPattern(
        '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
        'must be a key id (a UUID)',
      ),
    },
    action: { type: 'string', enum: [...AUDIT_ACTIONS] },
    from: when,
    to: when,
    limit: { type: 'integer', minimum: 1, maximum: 200 },
    cursor: { type: 'string', maxLength: 500 },
  },
} as const;
