import { listFilterProperties } from './scans.js';

/**
 * Request schemas of case triage (docs/cases.md#triage-on-a-case): `POST /api/v1/cases/triage` selects cases by
 * `caseIds` or by the list filters of `GET /api/v1/cases` (the same names and values, comma
 * lists included: `{"priority": "CRITICAL,HIGH", "stale": true}`); at least one of them.
 */

/** Most case ids one request names. */
export const CASE_IDS_MAX = 1000;

export const caseTriageBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    ...listFilterProperties,
    caseIds: {
      type: 'array',
      minItems: 1,
      maxItems: CASE_IDS_MAX,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: 100 },
    },
  },
} as const;
