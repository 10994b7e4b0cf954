import { describedPattern } from '../../lib/schema-patterns.js';
import { TARGETS, WORKFLOW_KINDS } from '../../domain/workflows/targets/registry.js';
import { CASE_STATUSES } from '../../domain/cases/case-status.js';
import {
  ASSET_ENVIRONMENTS,
  PRIORITIES,
  RECOMMENDED_ACTIONS,
  SEVERITIES,
} from '../../domain/triage-engine/types.js';
import { listFilterProperties } from './scans.js';

/**
 * Request schemas of `/api/v1/workflows` (docs/workflows.md). The rule takes the case list's filters
 * (docs/workflows.md#rules) as a JSON object, lists as arrays; the target is one of the registry's kinds
 * (`domain/workflows/targets/registry.ts`).
 */
const enumList = (values: readonly string[]) =>
  ({
    type: 'array',
    maxItems: values.length,
    uniqueItems: true,
    items: { type: 'string', enum: [...values] },
  }) as const;

/** A workflow's target kind: one of the registry's. */
export const workflowKindSchema = { type: 'string', enum: [...WORKFLOW_KINDS] } as const;

const text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max }) as const;

export const ruleSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    severity: enumList(SEVERITIES),
    priority: enumList(PRIORITIES),
    action: enumList(RECOMMENDED_ACTIONS),
    triaged: { type: 'boolean' },
    stale: { type: 'boolean' },
    status: enumList(CASE_STATUSES),
    kev: { type: 'boolean' },
    cve: {
      type: 'string',
      maxLength: 30,
      pattern: describedPattern('^[Cc][Vv][Ee]-\\d{4}-\\d{4,}$', 'must be a CVE id such as CVE-2021-44228'),
    },
    asset: text(300),
    environment: enumList(ASSET_ENVIRONMENTS),
    scanner: text(100),
    scan: text(100),
    assignee: listFilterProperties.assignee,
    unassigned: listFilterProperties.unassigned,
    tag: listFilterProperties.tag,
  },
} as const;

export const fieldsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    summary: text(1000),
    priority: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(PRIORITIES.map((p) => [p, text(100)])),
    },
    labels: { type: 'array', maxItems: 20, items: text(100) },
  },
} as const;

export const statusMapSchema = {
  type: 'object',
  maxProperties: 30,
  propertyNames: { type: 'string', minLength: 1, maxLength: 100 },
  additionalProperties: { type: 'string', enum: [...CASE_STATUSES] },
} as const;

/** A target's proactive rate limit (`domain/workflows/rate-limit.ts`). */
export const rateLimitSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['requests', 'perSeconds'],
  description:
    'At most `requests` calls to the target in any `perSeconds` seconds, spaced evenly and shared by ' +
    'every worker process; a delivery over it waits (its job is delayed), it never fails for it. ' +
    `Defaults: ${WORKFLOW_KINDS.map((k) => `${TARGETS[k].label} ${TARGETS[k].defaultRateLimit.requests} per ${TARGETS[k].defaultRateLimit.perSeconds} s`).join(', ')}.`,
  properties: {
    requests: { type: 'integer', minimum: 1, maximum: 1000 },
    perSeconds: { type: 'integer', minimum: 1, maximum: 3600 },
  },
  examples: [{ requests: 10, perSeconds: 1 }],
} as const;

/**
 * Picks the kind's schema with if/then, so errors name the kind's own fields (not a oneOf); each
 * kind's schema is its registry entry's, with the shared `rateLimit`.
 */
const targetSchema = {
  type: 'object',
  required: ['kind'],
  properties: { kind: workflowKindSchema },
  allOf: WORKFLOW_KINDS.map((kind) => {
    const own = TARGETS[kind].requestSchema as { properties: Record<string, unknown> };
    return {
      if: { properties: { kind: { const: kind } } },
      then: { ...own, properties: { ...own.properties, rateLimit: rateLimitSchema } },
    };
  }),
} as const;

export const createWorkflowBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'target'],
  properties: {
    name: text(200),
    enabled: { type: 'boolean' },
    target: targetSchema,
    rule: ruleSchema,
    fields: fieldsSchema,
    statusMap: statusMapSchema,
  },
} as const;

export const patchWorkflowBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: text(200),
    enabled: { type: 'boolean' },
    rule: ruleSchema,
    fields: fieldsSchema,
    statusMap: statusMapSchema,
    credential: text(2000),
    rateLimit: rateLimitSchema,
  },
} as const;

export const listDeliveriesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 200 },
    cursor: { type: 'string', maxLength: 500 },
  },
} as const;

/** The console editor's live preview: a kind, the fields being edited, and optionally the sample case. */
export const previewWorkflowBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    kind: workflowKindSchema,
    fields: fieldsSchema,
    caseId: { type: 'string', maxLength: 100 },
  },
} as const;

export const hookParams = {
  type: 'object',
  required: ['workflowId'],
  properties: { workflowId: { type: 'string', maxLength: 100 } },
} as const;
