import { SCAN_FORMATS } from '../../domain/scans/scan-formats.js';
import { CASE_STATUSES } from '../../domain/cases/case-status.js';
import { SLA_STATES } from '../../domain/cases/case-due-dates.js';
import { RECOMMENDED_ACTIONS, SEVERITIES } from '../../domain/triage-engine/types.js';
import { workflowKindSchema } from './workflows.js';
import {
  cursor,
  isoDateTime,
  listOf,
  nullableDateTime,
  nullableInteger,
  nullableNumber,
  nullableString,
} from './responses.js';

/**
 * Response shapes of the scan, finding and case routes (docs/ingestion.md#scan-status, docs/cases.md), as `viewScan`,
 * `viewFinding`, `viewCase` and `viewCaseDetail` build them. Objects stay open (no
 * `additionalProperties: false`): a field added to a view is an addition, not a break.
 */

const severity = { type: 'string', enum: [...SEVERITIES] } as const;
const caseStatus = { type: 'string', enum: [...CASE_STATUSES] } as const;
const stringList = { type: 'array', items: { type: 'string' } } as const;

export const scanAccepted = {
  description: 'Stored and queued for parsing (`Location` of the status: `statusUrl`).',
  type: 'object',
  required: ['scanId', 'status', 'statusUrl'],
  properties: {
    scanId: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: ['queued', 'parsing', 'completed', 'failed'] },
    statusUrl: { type: 'string' },
  },
  examples: [
    {
      scanId: '0b6c1c2e-5a0e-4c59-9d55-8f4d8f3d2a10',
      status: 'queued',
      statusUrl: '/api/pipeline/scan/0b6c1c2e-5a0e-4c59-9d55-8f4d8f3d2a10',
    },
  ],
} as const;

export const scanView = {
  description: 'A scan and its parse progress.',
  type: 'object',
  required: ['object', 'id', 'scanId', 'status', 'format', 'bytes', 'bytesParsed', 'progress', 'counts'],
  properties: {
    object: { type: 'string', const: 'scan' },
    id: { type: 'string', format: 'uuid' },
    scanId: { type: 'string', format: 'uuid', description: 'Same as `id`.' },
    name: nullableString,
    status: { type: 'string', enum: ['queued', 'parsing', 'completed', 'failed'] },
    format: { type: ['string', 'null'], enum: [...SCAN_FORMATS, null] },
    bytes: { type: 'integer', description: 'Decompressed size of the stored file.' },
    bytesParsed: { type: 'integer' },
    progress: { type: 'number', minimum: 0, maximum: 1 },
    sha256: { type: 'string' },
    asset: {
      type: 'object',
      properties: {
        name: nullableString,
        environment: nullableString,
        criticality: nullableString,
        internetExposed: { type: ['boolean', 'null'] },
      },
    },
    counts: {
      type: 'object',
      required: ['findings', 'new', 'duplicate', 'resolved', 'reopened', 'bySeverity'],
      properties: {
        findings: { type: 'integer' },
        new: { type: 'integer' },
        duplicate: { type: 'integer' },
        resolved: {
          type: 'integer',
          description: 'Open and in-progress cases of its scope this scan no longer saw and resolved.',
        },
        reopened: { type: 'integer', description: 'Resolved cases this scan saw again and reopened.' },
        bySeverity: {
          type: 'object',
          properties: Object.fromEntries(SEVERITIES.map((s) => [s, { type: 'integer' }])),
        },
      },
    },
    resolveMissing: {
      type: 'boolean',
      description:
        "The upload's `resolveMissing`: whether the scan resolves the cases of its scope it does not see.",
    },
    notes: stringList,
    error: {
      type: ['object', 'null'],
      description: 'Why the scan failed (`unparseable_scan` with line and column, `internal_error`).',
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        line: nullableInteger,
        column: nullableInteger,
      },
    },
    createdAt: isoDateTime,
    startedAt: nullableDateTime,
    finishedAt: nullableDateTime,
    fileDeleted: {
      type: 'boolean',
      description:
        "The raw uploaded file is gone: removed by the workspace's scan file retention, or with a failed scan. Findings and cases stay.",
    },
    fileDeletedAt: { ...nullableDateTime, description: 'When the retention removed the raw file.' },
    triage: {
      type: ['object', 'null'],
      description:
        'The case triage the upload asked for (`triage=new|all`), `null` without it (on `GET /api/pipeline/scan/:id` and `GET /api/v1/scans/:id`).',
      required: ['status', 'requested', 'answered', 'failed', 'skippedForQuota', 'batchId', 'byPriority'],
      properties: {
        status: { type: 'string', enum: ['pending', 'running', 'completed', 'cancelled'] },
        requested: { type: 'integer', description: 'Cases the option named.' },
        answered: { type: 'integer' },
        failed: { type: 'integer' },
        skippedForQuota: { type: 'integer', description: 'Cases left out: the month had too few AI calls.' },
        batchId: { type: ['string', 'null'], description: 'The triage batch (its id is the scan id).' },
        byPriority: {
          type: 'object',
          description: 'Once completed: the cases this triage answered, by their current priority.',
          additionalProperties: false,
          properties: Object.fromEntries(SEVERITIES.map((p) => [p, { type: 'integer' }])),
        },
      },
    },
  },
} as const;

export const scanList = listOf(scanView);

/** The answer fields of a case triage (docs/cases.md#triage-on-a-case: the triage answer plus `policyVersion`). */
const triageAnswerProperties = {
  priority: severity,
  recommendedAction: { type: 'string', enum: [...RECOMMENDED_ACTIONS] },
  reasoning: { type: 'string' },
  confidenceScore: { type: 'number', minimum: 0, maximum: 1 },
  severityOverride: { type: ['string', 'null'], enum: [...SEVERITIES, null] },
  model: { type: 'string', description: '`<provider>:<model_name>`' },
  triagedAt: isoDateTime,
  policyVersion: { type: 'string', description: 'The safety policy version the answer passed.' },
} as const;
const triageAnswerRequired = [
  'priority',
  'recommendedAction',
  'reasoning',
  'confidenceScore',
  'severityOverride',
  'model',
  'triagedAt',
  'policyVersion',
] as const;

const caseTriage = {
  description: "The case's current triage, or null when it was never triaged.",
  type: ['object', 'null'],
  required: [...triageAnswerRequired],
  properties: triageAnswerProperties,
} as const;

/** One answer of a case's triage history, newest first. */
export const caseTriageHistoryEntry = {
  type: 'object',
  required: ['object', 'id', ...triageAnswerRequired, 'actor', 'enrichment'],
  properties: {
    object: { type: 'string', const: 'case_triage' },
    id: { type: 'string' },
    ...triageAnswerProperties,
    actor: { type: ['string', 'null'], description: '`key:<id>` of the key that asked, when a key did' },
    enrichment: {
      description: 'The enrichment the case had when triaged; staleness compares it with today’s.',
      type: 'object',
      properties: { kev: { type: 'boolean' }, epss: nullableNumber, cvssScore: nullableNumber },
    },
  },
} as const;

export const caseTriageHistoryList = listOf(caseTriageHistoryEntry);

export const findingView = {
  description: 'One sighting of a case in a scan, normalised.',
  type: 'object',
  required: ['object', 'id', 'scanId', 'caseId', 'title', 'severity', 'fingerprint'],
  properties: {
    object: { type: 'string', const: 'finding' },
    id: { type: 'string', format: 'uuid' },
    scanId: { type: 'string', format: 'uuid' },
    caseId: { type: 'string', format: 'uuid' },
    recordIndex: { type: 'integer' },
    fingerprint: { type: 'string' },
    scanner: { type: 'string' },
    ruleId: nullableString,
    title: { type: 'string' },
    severity,
    cveIds: stringList,
    cweIds: stringList,
    cvssScore: nullableNumber,
    cvssVector: nullableString,
    kev: { type: 'boolean' },
    description: nullableString,
    solution: nullableString,
    asset: {
      type: 'object',
      properties: {
        ...Object.fromEntries(
          ['name', 'host', 'ip', 'fqdn', 'os', 'component', 'componentVersion', 'purl', 'file'].map((k) => [
            k,
            nullableString,
          ]),
        ),
        line: nullableInteger,
      },
    },
    port: nullableInteger,
    protocol: nullableString,
    exploitAvailable: { type: ['boolean', 'null'] },
    confidence: nullableNumber,
    suppressed: { type: 'boolean' },
    triage: { ...caseTriage, description: "Its case's current triage, or null." },
    triageStale: { type: 'boolean', description: "Its case's `triageStale`." },
    createdAt: isoDateTime,
  },
} as const;

export const findingList = listOf(findingView);

const evidenceView = {
  type: 'object',
  required: ['id', 'scanId', 'seenAt'],
  properties: {
    id: { type: 'string' },
    scanId: { type: 'string', format: 'uuid' },
    findingId: { type: ['string', 'null'] },
    rawExcerpt: nullableString,
    scannerOutput: nullableString,
    seenAt: isoDateTime,
  },
} as const;

export const evidenceList = listOf(evidenceView);

const caseProperties = {
  object: { type: 'string', const: 'case' },
  id: { type: 'string', format: 'uuid' },
  fingerprint: { type: 'string' },
  title: { type: 'string' },
  severity,
  status: caseStatus,
  scanner: { type: 'string' },
  ruleId: nullableString,
  cveIds: stringList,
  aliases: {
    ...stringList,
    description: "Its other identifiers (GHSA, OSV, a vendor's), as the scanner gave them.",
  },
  cweIds: stringList,
  cvssScore: nullableNumber,
  kev: { type: 'boolean' },
  epss: { ...nullableNumber, description: 'The highest EPSS of its CVEs.' },
  asset: {
    type: 'object',
    properties: Object.fromEntries(
      ['name', 'host', 'ip', 'fqdn', 'component'].map((k) => [k, nullableString]),
    ),
  },
  port: nullableInteger,
  protocol: nullableString,
  firstSeen: isoDateTime,
  lastSeen: isoDateTime,
  firstScanId: { type: ['string', 'null'] },
  lastScanId: { type: ['string', 'null'] },
  sightings: { type: 'integer' },
  triage: caseTriage,
  triageStale: {
    type: 'boolean',
    description: 'Its KEV membership, EPSS (by 0.1 or more) or CVSS changed after it was triaged.',
  },
  dueAt: {
    type: ['string', 'null'],
    format: 'date-time',
    description:
      'When it is due under the workspace SLA policy (docs/cases.md#due-dates-and-sla); null without a due date.',
  },
  sla: {
    type: ['string', 'null'],
    enum: [...SLA_STATES, null],
    description:
      'Open: `on_track`, `due_soon` (last 20% of its window) or `breached`; resolved: `met` or `missed`; otherwise null.',
  },
  createdAt: isoDateTime,
  updatedAt: isoDateTime,
  leadCveId: {
    ...nullableString,
    description:
      "In lists: the most important of its CVEs (in KEV first, then the highest EPSS, then the scanner's order); null without CVEs.",
  },
  duplicateOf: {
    type: ['string', 'null'],
    description:
      'The original case of the same vulnerability on the same asset; a duplicate is hidden from lists unless `duplicates=include`.',
  },
  assignee: { ...nullableString, description: 'Who owns it (an email); null when nobody does.' },
  tags: {
    ...stringList,
    description: 'Short slugs (`[a-z0-9][a-z0-9._-]*`, at most 32 characters), at most 20.',
  },
  acceptance: {
    type: ['object', 'null'],
    description:
      'Its risk acceptance: when it ends (the case then reopens) and why; null unless `risk_accepted`.',
    required: ['expiresAt', 'note'],
    properties: { expiresAt: isoDateTime, note: nullableString },
  },
} as const;

export const caseView = {
  description: 'One problem on one asset: the findings with the same fingerprint.',
  type: 'object',
  required: ['object', 'id', 'fingerprint', 'title', 'severity', 'status', 'triage', 'triageStale'],
  properties: caseProperties,
} as const;

export const caseList = listOf(caseView);

export const caseDetail = {
  description:
    'A case with its newest sightings (`evidenceNextCursor` pages on), its status history and its newest triage answers (`triageHistoryNextCursor` pages on).',
  type: 'object',
  required: [
    ...caseView.required,
    'evidence',
    'evidenceNextCursor',
    'history',
    'triageHistory',
    'triageHistoryNextCursor',
  ],
  properties: {
    ...caseProperties,
    evidence: { type: 'array', items: evidenceView },
    evidenceNextCursor: cursor,
    triageHistory: { type: 'array', items: caseTriageHistoryEntry },
    triageHistoryNextCursor: cursor,
    links: {
      type: 'array',
      description: "The case's external issues through mapped workflows (docs/workflows.md).",
      items: {
        type: 'object',
        required: ['workflowId', 'kind', 'externalId', 'url', 'state', 'lastDeliveredAt'],
        properties: {
          workflowId: { type: 'string', format: 'uuid' },
          kind: workflowKindSchema,
          externalId: { type: ['string', 'null'] },
          url: { type: ['string', 'null'] },
          state: { type: 'string', enum: ['open', 'closed'] },
          lastDeliveredAt: { type: ['string', 'null'], format: 'date-time' },
        },
      },
    },
    history: {
      type: 'array',
      items: {
        type: 'object',
        required: ['to', 'actor', 'at'],
        properties: {
          from: { type: ['string', 'null'] },
          to: caseStatus,
          actor: { type: 'string', description: '`key:<id>`, `user:<id>`, `workflow:<id>` or `system`' },
          reason: {
            ...nullableString,
            description:
              'Why, when the service made the change: `not_seen` (a rescan), `acceptance_expired` (docs/cases.md#risk-acceptance).',
          },
          note: nullableString,
          at: isoDateTime,
        },
      },
    },
  },
} as const;

export const scanDeletion = {
  description:
    'A deleted scan: its findings and the cases only it sighted are gone (docs/ingestion.md#deleting-a-scan).',
  type: 'object',
  required: ['object', 'scanId', 'findings', 'casesDeleted', 'casesClosed', 'casesKept'],
  properties: {
    object: { type: 'string', const: 'scan_deletion' },
    scanId: { type: 'string', format: 'uuid' },
    findings: { type: 'integer', description: 'Findings removed with it.' },
    casesDeleted: { type: 'integer', description: 'Cases no other completed scan sighted, deleted.' },
    casesClosed: {
      type: 'integer',
      description:
        'Cases no other completed scan sighted that a workflow has an open issue of: kept as false_positive, so the issue closes.',
    },
    casesKept: {
      type: 'integer',
      description: 'Cases another scan sighted, kept with their sightings recounted.',
    },
  },
} as const;
