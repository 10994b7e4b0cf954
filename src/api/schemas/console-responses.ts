import { ROLES } from '../../domain/workspaces/roles.js';
import { SEVERITIES } from '../../domain/triage-engine/types.js';
import { decimalString, isoDateTime, listOf, nullableDateTime } from './responses.js';
import { caseDetail, scanView } from './scans-responses.js';
import { usageTotals, workspaceIdentity } from './keys-responses.js';

/** Response shapes of the console JSON API (`/api/console`, docs/console.md#console-json-api). */

export const signedUp = {
  description: 'The workspace, the one-time reveal page of its first key, and the session (cookie).',
  type: 'object',
  required: ['workspace', 'revealUrl', 'csrfToken'],
  properties: {
    workspace: {
      type: 'object',
      required: ['id', 'name', 'plan'],
      properties: { ...workspaceIdentity, trialEndsAt: nullableDateTime },
    },
    revealUrl: { type: 'string' },
    csrfToken: { type: 'string', description: 'Send as `X-CSRF-Token` on state changes.' },
  },
} as const;

export const loggedIn = {
  description: 'Signed in (session cookie set).',
  type: 'object',
  required: ['workspaceId', 'csrfToken'],
  properties: { workspaceId: { type: 'string', format: 'uuid' }, csrfToken: { type: 'string' } },
} as const;

export const loggedOut = { description: 'Signed out (session cookie cleared).', type: 'null' } as const;

export const sessionView = {
  description: 'The current session.',
  type: 'object',
  required: ['userId', 'workspaceId', 'role', 'csrfToken', 'expiresAt'],
  properties: {
    userId: { type: 'string' },
    workspaceId: { type: 'string' },
    role: { type: 'string', enum: [...ROLES], description: "The member's role in the workspace." },
    csrfToken: { type: 'string' },
    expiresAt: isoDateTime,
  },
} as const;

export const workspaceView = {
  description: 'Settings > API keys: the workspace card.',
  type: 'object',
  required: ['id', 'name', 'plan', 'status', 'activeKeys', 'aiCallsThisMonth', 'aiCallLimit'],
  properties: {
    ...workspaceIdentity,
    trialDaysLeft: { type: ['integer', 'null'] },
    trialEndsAt: nullableDateTime,
    status: { type: 'string' },
    rotationPolicyDays: { type: 'integer' },
    activeKeys: { type: 'integer' },
    rotatingKeys: { type: 'integer' },
    tokenUsageTotal: { type: 'integer' },
    aiCallsThisMonth: { type: 'integer' },
    aiCallLimit: { type: 'integer' },
    spendThisMonthUsd: decimalString,
    limits: { type: 'object', description: "The plan's limits (config/plans.json)." },
    monthResetsAt: isoDateTime,
  },
} as const;

export const statementView = {
  description: 'The monthly statement: AI calls, tokens and spend per key and model tier.',
  type: 'object',
  required: ['month', 'lines', 'totals'],
  properties: {
    month: { type: 'string', pattern: '^\\d{4}-\\d{2}$' },
    lines: {
      type: 'array',
      items: {
        type: 'object',
        required: ['keyId', 'tier', 'aiCalls', 'spendUsd'],
        properties: { keyId: { type: 'string' }, tier: { type: 'string' }, ...usageTotals },
      },
    },
    totals: {
      type: 'object',
      required: ['aiCalls', 'tokens', 'spendUsd'],
      properties: { aiCalls: { type: 'integer' }, tokens: { type: 'integer' }, spendUsd: decimalString },
    },
  },
} as const;

/** Console data routes (docs/console.md): the API's views plus what the pages show beside them. */
export const consoleScanView = {
  ...scanView,
  properties: {
    ...scanView.properties,
    keyId: { type: ['string', 'null'], description: 'null: uploaded in the console.' },
  },
} as const;

export const consoleScanList = listOf(consoleScanView);

export const consoleCaseDetail = {
  ...caseDetail,
  required: [...caseDetail.required, 'enrichment', 'kevCatalogLoaded'],
  properties: {
    ...caseDetail.properties,
    enrichment: { type: 'array', items: { type: 'object' }, description: 'KEV, EPSS and CVSS of its CVEs.' },
    kevCatalogLoaded: {
      type: 'boolean',
      description:
        'A CISA KEV catalog is loaded: a CVE absent from it is not listed (else its KEV status is unknown).',
    },
  },
} as const;

const bySeverity = {
  type: 'object',
  properties: Object.fromEntries(SEVERITIES.map((s) => [s, { type: 'integer' }])),
} as const;

const byPriority = {
  type: 'object',
  description: 'By the current triage priority; UNTRIAGED counts the cases without a triage.',
  properties: Object.fromEntries([...SEVERITIES, 'UNTRIAGED'].map((s) => [s, { type: 'integer' }])),
} as const;

export const caseCounts = {
  description: 'Cases matching the filters, by severity and by triage priority.',
  type: 'object',
  required: ['total', 'bySeverity', 'byPriority', 'directExportMax'],
  properties: {
    total: { type: 'integer' },
    bySeverity,
    byPriority,
    directExportMax: { type: 'integer', description: 'Most cases a direct export streams.' },
  },
} as const;

export const bulkStatusResult = {
  description: 'How many of the chosen cases changed.',
  type: 'object',
  required: ['changed', 'unchanged', 'notFound'],
  properties: {
    changed: { type: 'integer' },
    unchanged: { type: 'integer' },
    notFound: { type: 'integer' },
  },
} as const;

const meanDays = {
  type: 'object',
  properties: Object.fromEntries(
    ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'].map((s) => [s, { type: ['number', 'null'] }]),
  ),
} as const;

export const bulkOwnerResult = {
  description: 'How many of the chosen cases changed.',
  type: 'object',
  required: ['updated', 'tooManyTags', 'notFound'],
  properties: {
    updated: { type: 'integer' },
    tooManyTags: {
      type: 'integer',
      description: 'Cases left as they were: the added tags would take them past 20.',
    },
    notFound: { type: 'integer' },
  },
} as const;

export const dashboardView = {
  description:
    'The dashboard: open cases by priority and severity, KEV, new cases per day, AI calls this month.',
  type: 'object',
  required: ['open', 'kevOpen', 'newPerDay', 'aiCallsThisMonth', 'month', 'remediation'],
  properties: {
    open: { type: 'object', properties: { total: { type: 'integer' }, bySeverity, byPriority } },
    kevOpen: { type: 'integer' },
    newPerDay: {
      type: 'array',
      items: {
        type: 'object',
        required: ['day', 'count'],
        properties: { day: { type: 'string' }, count: { type: 'integer' } },
      },
    },
    aiCallsThisMonth: { type: 'integer' },
    month: { type: 'string', pattern: '^\\d{4}-\\d{2}$' },
    remediation: {
      type: 'object',
      description: 'Due dates and remediation (docs/console.md#dashboard).',
      required: ['pastDue', 'meanDaysToRemediate', 'slaCompliance', 'resolvedByRescans'],
      properties: {
        pastDue: { type: 'integer', description: 'Open or in-progress cases past their due date.' },
        meanDaysToRemediate: {
          type: 'object',
          description: 'Mean days from first sighting to resolution by severity, over 30 and 90 days.',
          properties: { days30: meanDays, days90: meanDays },
        },
        slaCompliance: {
          type: 'object',
          description: 'Resolutions of the last 90 days with a due date: by it (met) or after (missed).',
          properties: {
            met: { type: 'integer' },
            missed: { type: 'integer' },
            rate: { type: ['number', 'null'] },
          },
        },
        resolvedByRescans: {
          type: 'object',
          description: 'Cases a rescan resolved because it no longer saw them.',
          properties: { days30: { type: 'integer' }, days90: { type: 'integer' } },
        },
      },
    },
  },
} as const;

export const triagePreview = {
  description: 'What a triage of the chosen cases would use, and what the month has left.',
  type: 'object',
  required: ['cases', 'aiCalls', 'skippedForQuota', 'month'],
  properties: {
    cases: { type: 'integer', description: 'Cases chosen.' },
    aiCalls: { type: 'integer', description: 'AI calls the triage would use.' },
    skippedForQuota: { type: 'integer' },
    month: {
      type: 'object',
      required: ['limit', 'used', 'reserved', 'remaining'],
      properties: {
        limit: { type: 'integer' },
        used: { type: 'integer' },
        reserved: { type: 'integer' },
        remaining: { type: 'integer' },
      },
    },
  },
} as const;

export const consoleCaseBatch = {
  description: 'The chosen cases as a triage batch (202), or nothing to triage (200, `batchId` null).',
  type: 'object',
  required: ['batchId', 'requested', 'total', 'skippedForQuota'],
  properties: {
    batchId: { type: ['string', 'null'], format: 'uuid' },
    requested: { type: 'integer' },
    total: { type: 'integer' },
    skippedForQuota: { type: 'integer' },
  },
} as const;
