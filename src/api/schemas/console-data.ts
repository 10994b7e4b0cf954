import { listCasesQuery, listScansQuery, patchCaseBody, uploadQuery } from './scans.js';
import { createExportBody } from './exports.js';

/**
 * Request schemas of the console's data routes (issue 16): the same vocabulary as the JSON API
 * under `/api/v1`, so a filter the API learns the console learns with it.
 */

export const consoleScansQuery = listScansQuery;

/** The upload's options travel in the query string, as on `POST /api/pipeline/scan`. */
export const consoleUploadQuery = uploadQuery;

export const consoleCasesQuery = listCasesQuery;

/** The list filters of `GET /api/v1/cases` as a JSON object (lists as arrays), as export jobs take them. */
const filterOfExport = createExportBody.properties.filter;

/** A bulk status change: the chosen cases by id, or every case of a filter (at most {@link BULK_MAX}). */
export const BULK_MAX = 1000;

export const bulkStatusBody = {
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: {
    status: patchCaseBody.properties.status,
    note: patchCaseBody.properties.note,
    caseIds: {
      type: 'array',
      minItems: 1,
      maxItems: BULK_MAX,
      uniqueItems: true,
      items: { type: 'string', maxLength: 100 },
    },
    filter: filterOfExport,
  },
  oneOf: [{ required: ['caseIds'] }, { required: ['filter'] }],
} as const;

export const consoleExportBody = createExportBody;

export const dashboardQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { days: { type: 'integer', minimum: 7, maximum: 90 } },
} as const;
