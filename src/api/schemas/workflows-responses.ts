import { CASE_STATUSES } from '../../domain/cases/case-status.js';
import { isoDateTime, nullableDateTime, nullableInteger, nullableString } from './responses.js';
import { TARGETS, WORKFLOW_KINDS } from '../../domain/workflows/targets/registry.js';
import { fieldsSchema, rateLimitSchema, ruleSchema, workflowKindSchema } from './workflows.js';

/** Response shapes of the workflow routes (docs/workflows.md#secrets). No credential or secret but the 201's `secret`. */

const targetView = {
  type: 'object',
  description: 'The target without its credential; `credential` is its last four characters.',
  required: ['kind'],
  properties: {
    kind: workflowKindSchema,
    ...Object.assign({}, ...WORKFLOW_KINDS.map((k) => TARGETS[k].viewProperties)),
    credential: { type: 'string', description: 'Masked: `…` and the last four characters.' },
    rateLimit: {
      ...rateLimitSchema,
      description: "The rate limit in force (the kind's default when none was set).",
    },
  },
} as const;

const workflowProperties = {
  object: { type: 'string', const: 'workflow' },
  id: { type: 'string', format: 'uuid' },
  name: { type: 'string' },
  kind: workflowKindSchema,
  enabled: { type: 'boolean' },
  target: targetView,
  rule: ruleSchema,
  fields: fieldsSchema,
  statusMap: { type: 'object', additionalProperties: { type: 'string', enum: [...CASE_STATUSES] } },
  inboundUrl: {
    ...nullableString,
    description: 'Where Jira or GitHub sends its webhook (null for a webhook target).',
  },
  lastDeliveryStatus: { type: ['string', 'null'], enum: ['pending', 'delivered', 'failed', null] },
  lastDeliveryAt: nullableDateTime,
  lastError: { ...nullableString, description: "The target's message on the last failed delivery." },
  createdAt: isoDateTime,
  updatedAt: isoDateTime,
} as const;

const workflowRequired = ['object', 'id', 'name', 'kind', 'enabled', 'target', 'rule', 'fields', 'createdAt'];

export const workflowView = {
  description: 'A mapped workflow.',
  type: 'object',
  required: workflowRequired,
  properties: workflowProperties,
} as const;

export const createdWorkflowView = {
  description: 'The new workflow, with its signing secret: shown this once.',
  type: 'object',
  required: [...workflowRequired, 'secret'],
  properties: {
    ...workflowProperties,
    secret: {
      type: 'string',
      description:
        '`whsec_` + base64: signs outbound webhooks (Standard Webhooks) and verifies inbound Jira/GitHub webhooks.',
    },
  },
} as const;

export const workflowList = {
  description: 'The workspace’s workflows, newest first.',
  type: 'object',
  required: ['object', 'data', 'nextCursor'],
  properties: {
    object: { type: 'string', const: 'list' },
    data: { type: 'array', items: workflowView },
    nextCursor: { type: 'null' },
  },
} as const;

export const workflowDeleted = {
  description: 'Deleted, with its links and deliveries.',
  type: 'null',
} as const;

export const workflowTestView = {
  description: 'What the target answered to one sample delivery.',
  type: 'object',
  required: ['object', 'deliveryId', 'delivered', 'responseCode', 'error'],
  properties: {
    object: { type: 'string', const: 'workflow_test' },
    deliveryId: { type: 'string', format: 'uuid' },
    delivered: { type: 'boolean' },
    responseCode: nullableInteger,
    error: nullableString,
  },
} as const;

const deliveryView = {
  type: 'object',
  required: ['object', 'id', 'event', 'status', 'attempts'],
  properties: {
    object: { type: 'string', const: 'delivery' },
    id: { type: 'string', format: 'uuid' },
    caseId: { type: ['string', 'null'], format: 'uuid' },
    event: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
    attempts: { type: 'integer' },
    responseCode: nullableInteger,
    error: nullableString,
    nextAttemptAt: { ...nullableDateTime, description: 'When a pending delivery is tried again.' },
    createdAt: isoDateTime,
    finishedAt: nullableDateTime,
  },
} as const;

export const deliveryList = {
  description: 'A workflow’s deliveries, newest first, with cursor paging.',
  type: 'object',
  required: ['object', 'data', 'nextCursor'],
  properties: {
    object: { type: 'string', const: 'list' },
    data: { type: 'array', items: deliveryView },
    nextCursor: nullableString,
  },
} as const;

/** The preview's answer: the sample case and what the mapping makes of it. */
export const workflowPreviewView = {
  description: 'The mapped fields of a workflow for one sample case.',
  type: 'object',
  required: ['case', 'summary', 'labels', 'priority'],
  properties: {
    case: {
      type: 'object',
      required: ['id', 'title'],
      properties: { id: { type: 'string' }, title: { type: 'string' } },
    },
    summary: { type: 'string' },
    labels: { type: 'array', items: { type: 'string' } },
    priority: { type: ['string', 'null'] },
  },
} as const;

export const hookReceipt = {
  description: 'The inbound webhook was verified; `applied` says whether it changed a case.',
  type: 'object',
  required: ['object', 'applied'],
  properties: {
    object: { type: 'string', const: 'hook_receipt' },
    applied: { type: 'boolean' },
    caseId: { type: 'string' },
    status: { type: 'string' },
    reason: { type: 'string' },
  },
} as const;
