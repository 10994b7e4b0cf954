import { instantOf, splitList, type ListFilters } from '../../domain/cases/list-filters.js';
import { invalidRequest } from '../../lib/errors.js';
import { describedPattern } from '../../lib/schema-patterns.js';
import { SCAN_FORMATS } from '../../domain/scans/scan-formats.js';
import { SCAN_TRIAGE_MODES } from '../../domain/scans/scan-store.js';
import { CASE_STATUSES } from '../../domain/cases/case-status.js';
import { CASE_SORTS, type CaseSort } from '../../domain/cases/case-sort.js';
import { SLA_STATES } from '../../domain/cases/case-due-dates.js';
import {
  ASSET_CRITICALITIES,
  ASSET_ENVIRONMENTS,
  PRIORITIES,
  RECOMMENDED_ACTIONS,
  SEVERITIES,
} from '../../domain/triage-engine/types.js';

/** Request schemas of the scan, finding and case routes (docs/ingestion.md#upload, docs/cases.md#lists-and-filters), from the domain's vocabulary. */

export const uploadQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    format: { type: 'string', enum: [...SCAN_FORMATS] },
    name: { type: 'string', minLength: 1, maxLength: 200 },
    asset: { type: 'string', minLength: 1, maxLength: 200 },
    environment: { type: 'string', enum: [...ASSET_ENVIRONMENTS] },
    criticality: { type: 'string', enum: [...ASSET_CRITICALITIES] },
    internetExposed: { type: 'boolean' },
    /** Which of the scan's cases to triage once parsed (docs/cases.md#case-triage). */
    triage: { type: 'string', enum: [...SCAN_TRIAGE_MODES] },
    /**
     * `false`: the scan resolves nothing it does not see (docs/ingestion.md#rescans).
     * On by default.
     */
    resolveMissing: { type: 'boolean' },
  },
} as const;

export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', maxLength: 100 } },
} as const;

/** Page size when `limit` is absent (the validator does not fill defaults). */
export const DEFAULT_LIMIT = 50;

const paging = {
  limit: { type: 'integer', minimum: 1, maximum: 200 },
  cursor: { type: 'string', maxLength: 500 },
} as const;

export const listScansQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...paging, status: { type: 'string', enum: ['queued', 'parsing', 'completed', 'failed'] } },
} as const;

const cve = {
  type: 'string',
  pattern: describedPattern('^[Cc][Vv][Ee]-\\d{4}-\\d{4,}$', 'must be a CVE id such as CVE-2021-44228'),
  maxLength: 30,
} as const;

const DUE_BEFORE_MESSAGE = 'must be a date (YYYY-MM-DD, UTC) or an ISO 8601 instant with a time zone';
/** A case's tag (docs/cases.md#owner-and-tags): a short lower-case slug. */
export const caseTag = {
  type: 'string',
  minLength: 1,
  maxLength: 32,
  pattern: describedPattern(
    '^[a-z0-9][a-z0-9._-]*$',
    'must be a short slug: lower-case letters, digits, dots, dashes and underscores, starting with a letter or digit',
  ),
} as const;

/**
 * A case's assignee: an email (when the workspace has members, one of theirs), by the HTML
 * standard's rule for an email field, so no quote, angle bracket, space or control character.
 */
export const assigneeEmail = {
  type: 'string',
  minLength: 3,
  maxLength: 254,
  pattern: describedPattern(
    "^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$",
    'must be an email address',
  ),
} as const;

/** An instant with its time zone (`2027-05-01T00:00:00Z`). */
export const instant = {
  type: 'string',
  maxLength: 40,
  pattern: describedPattern(
    '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$',
    'must be an ISO 8601 date-time with a time zone',
  ),
} as const;

/** A comma-separated list of `values`, e.g. `HIGH,CRITICAL`. */
const listOf = (values: readonly string[]) =>
  describedPattern(
    `^(${values.join('|')})(,(${values.join('|')}))*$`,
    `must be one or more of ${values.join(', ')}, separated by commas`,
  );
/** Long enough for every value once (and a repeat or two), short of a hostile megabyte of them. */
const LIST_MAX = 200;

/**
 * Filters shared by findings, cases and their exports (docs/cases.md#lists-and-filters). `severity`, `status`,
 * `priority` and `action` take comma-separated lists.
 */
export const listFilterProperties = {
  severity: { type: 'string', maxLength: LIST_MAX, pattern: listOf(SEVERITIES) },
  cve,
  asset: { type: 'string', minLength: 1, maxLength: 300 },
  scan: { type: 'string', maxLength: 100 },
  kev: { type: 'boolean' },
  /** A finding's status, priority, action and staleness are its case's. */
  status: { type: 'string', maxLength: LIST_MAX, pattern: listOf(CASE_STATUSES) },
  /** The current triage's priority; untriaged cases never match. */
  priority: { type: 'string', maxLength: LIST_MAX, pattern: listOf(PRIORITIES) },
  /** The current triage's recommended action. */
  action: { type: 'string', maxLength: LIST_MAX, pattern: listOf(RECOMMENDED_ACTIONS) },
  triaged: { type: 'boolean' },
  stale: { type: 'boolean' },
  scanner: { type: 'string', minLength: 1, maxLength: 100 },
  /** At least this EPSS (0 to 1): the highest of the CVEs' scores. */
  epssMin: { type: 'number', minimum: 0, maximum: 1 },
  /** Its SLA state now (docs/cases.md#due-dates-and-sla). */
  sla: { type: 'string', maxLength: LIST_MAX, pattern: listOf(SLA_STATES) },
  /** Due strictly before this instant. */
  dueBefore: {
    type: 'string',
    maxLength: 40,
    pattern: describedPattern(
      '^\\d{4}-\\d\\d-\\d\\d(T\\d\\d:\\d\\d(:\\d\\d(\\.\\d{1,6})?)?(Z|[+-]\\d\\d:\\d\\d))?$',
      DUE_BEFORE_MESSAGE,
    ),
  },
  /** Cases marked a duplicate of another are hidden unless `include`. */
  duplicates: { type: 'string', enum: ['include', 'exclude'] },
  /** Owned by this email (docs/cases.md#owner-and-tags). */
  assignee: assigneeEmail,
  /** `true`: owned by nobody. */
  unassigned: { type: 'boolean' },
  /** Carries this tag. */
  tag: caseTag,
} as const;

export const listFindingsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...paging, ...listFilterProperties, case: { type: 'string', maxLength: 100 } },
} as const;

export const listEvidenceQuery = { type: 'object', additionalProperties: false, properties: paging } as const;

export const listCasesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...paging, ...listFilterProperties, sort: { type: 'string', enum: [...CASE_SORTS] } },
} as const;

/** `GET /api/v1/cases/:id/triage-history`: paging only. */
export const listTriageHistoryQuery = listEvidenceQuery;

export interface ListQuery {
  limit?: number;
  cursor?: string;
  severity?: string;
  status?: string;
  priority?: string;
  action?: string;
  triaged?: boolean;
  stale?: boolean;
  cve?: string;
  asset?: string;
  scan?: string;
  case?: string;
  kev?: boolean;
  scanner?: string;
  epssMin?: number;
  sla?: string;
  dueBefore?: string;
  duplicates?: 'include' | 'exclude';
  assignee?: string;
  unassigned?: boolean;
  tag?: string;
  sort?: CaseSort;
}

/** A case's tags: at most 20, each once. */
export const caseTags = { type: 'array', maxItems: 20, uniqueItems: true, items: caseTag } as const;

/**
 * `PATCH /api/v1/cases/:id`: any of status (with its note; `risk_accepted` also with `expiresAt`),
 * assignee (null removes the owner) and tags (the whole set).
 */
export const patchCaseBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    status: { type: 'string', enum: [...CASE_STATUSES] },
    note: { type: 'string', maxLength: 2000 },
    /** When a risk acceptance ends (docs/cases.md#risk-acceptance). */
    expiresAt: instant,
    assignee: { anyOf: [assigneeEmail, { type: 'null' }] },
    tags: caseTags,
    /** Only `null`: un-marks a duplicate (docs/cases.md#one-vulnerability-one-case). */
    duplicateOf: { type: 'null' },
  },
  anyOf: [
    { required: ['status'] },
    { required: ['assignee'] },
    { required: ['tags'] },
    { required: ['duplicateOf'] },
  ],
} as const;

/** The list filters of a parsed query string (comma lists split): shared by the list and export routes. */
export function listFiltersOf(q: ListQuery): ListFilters {
  if (q.dueBefore !== undefined && instantOf(q.dueBefore) === null) {
    throw invalidRequest([{ path: '/querystring/dueBefore', message: DUE_BEFORE_MESSAGE }]);
  }
  return {
    severity: splitList(q.severity),
    status: splitList(q.status),
    priority: splitList(q.priority),
    action: splitList(q.action),
    triaged: q.triaged,
    stale: q.stale,
    cve: q.cve,
    asset: q.asset,
    scan: q.scan,
    kev: q.kev,
    scanner: q.scanner,
    epssMin: q.epssMin,
    sla: splitList(q.sla),
    dueBefore: q.dueBefore,
    duplicates: q.duplicates,
    assignee: q.assignee,
    unassigned: q.unassigned,
    tag: q.tag,
  };
}
