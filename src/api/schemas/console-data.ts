import {
  assigneeEmail,
  caseTag,
  listCasesQuery,
  listFilterProperties,
  listScansQuery,
  patchCaseBody,
  uploadQuery,
} from './scans.js';
import { caseTriageBody } from './case-triage.js';
import { createExportBody } from './exports.js';

/**
 * Request schemas of the console's data routes (docs/console.md): the same vocabulary as the JSON API
 * under `/api/v1`, so a filter the API learns the console learns with it.
 */

export const consoleScansQuery = listScansQuery;

/** The id of one of the workspace's keys, which a console action is done as (and billed to). */
const keyId = { type: 'string', minLength: 1, maxLength: 100 } as const;

/**
 * The upload's options travel in the query string, as on `POST /api/pipeline/scan`, plus `key`:
 * the key the upload is recorded as (required with `triage=new|all`, whose AI calls it is billed).
 */
export const consoleUploadQuery = {
  ...uploadQuery,
  properties: { ...uploadQuery.properties, key: keyId },
} as const;

export const consoleCasesQuery = listCasesQuery;

/** The list filters of `GET /api/v1/cases` as a JSON object (lists as arrays), as export jobs take them. */
const filterOfExport = createExportBody.properties.filter;

/**
 * A change of many cases (`POST /api/v1/cases/status`, `POST /api/v1/cases/owner`; docs/cases.md#bulk-changes):
 * the chosen cases by id, or every case of a filter; at most {@link BULK_MAX} (a filter matching
 * more is refused whole).
 */
export const BULK_MAX = 1000;

const bulkChoice = {
  caseIds: {
    type: 'array',
    minItems: 1,
    maxItems: BULK_MAX,
    uniqueItems: true,
    items: { type: 'string', maxLength: 100 },
  },
  filter: filterOfExport,
} as const;

export const bulkStatusBody = {
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: {
    status: patchCaseBody.properties.status,
    note: patchCaseBody.properties.note,
    expiresAt: patchCaseBody.properties.expiresAt,
    ...bulkChoice,
  },
  oneOf: [{ required: ['caseIds'] }, { required: ['filter'] }],
} as const;

const tagList = { type: 'array', minItems: 1, maxItems: 20, uniqueItems: true, items: caseTag } as const;

/** Sets the owner of (null: removes it), adds tags to and removes tags from many cases. */
export const bulkOwnerBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    assignee: { anyOf: [assigneeEmail, { type: 'null' }] },
    addTags: tagList,
    removeTags: tagList,
    ...bulkChoice,
  },
  oneOf: [{ required: ['caseIds'] }, { required: ['filter'] }],
  anyOf: [{ required: ['assignee'] }, { required: ['addTags'] }, { required: ['removeTags'] }],
} as const;

export const consoleExportBody = createExportBody;

export const dashboardQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { days: { type: 'integer', minimum: 7, maximum: 90 } },
} as const;

/** Cases to triage: by id, or every case of the list filters (as `POST /api/v1/cases/triage` takes them). */
const triageSelection = {
  caseIds: caseTriageBody.properties.caseIds,
  filters: { type: 'object', additionalProperties: false, properties: listFilterProperties },
} as const;

/** What a triage of the selection would spend: asked before the person confirms. */
export const triagePreviewBody = {
  type: 'object',
  additionalProperties: false,
  properties: triageSelection,
  oneOf: [{ required: ['caseIds'] }, { required: ['filters'] }],
} as const;

/** A triage of the selection, billed to `key` (a key of the workspace with cases:write and triage:write). */
export const consoleTriageBody = {
  type: 'object',
  additionalProperties: false,
  required: ['key'],
  properties: { key: keyId, ...triageSelection },
  oneOf: [{ required: ['caseIds'] }, { required: ['filters'] }],
} as const;

export const triageOneBody = {
  type: 'object',
  additionalProperties: false,
  required: ['key'],
  properties: { key: keyId },
} as const;
