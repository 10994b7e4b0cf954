import { PRIORITIES, RECOMMENDED_ACTIONS, SEVERITIES } from '../../domain/triage-engine/types.js';
import { cursor, isoDateTime, nullableDateTime } from './responses.js';

/** Response shapes of the triage routes (docs/triage.md#request-and-answer). */

const usage = {
  type: 'object',
  required: ['inputTokens', 'outputTokens'],
  properties: { inputTokens: { type: 'integer' }, outputTokens: { type: 'integer' } },
} as const;

/** `POST /api/v1/triage`, field for field docs/triage.md#request-and-answer (`TriageResponse`). */
export const triageAnswer = {
  description: 'The triage of one finding, after the safety policy.',
  type: 'object',
  required: [
    'priority',
    'recommendedAction',
    'reasoning',
    'confidenceScore',
    'severityOverride',
    'model',
    'triagedAt',
    'usage',
  ],
  properties: {
    priority: { type: 'string', enum: [...PRIORITIES] },
    recommendedAction: { type: 'string', enum: [...RECOMMENDED_ACTIONS] },
    reasoning: { type: 'string', description: 'Policy changes are noted as `[policy:RULE]`.' },
    confidenceScore: { type: 'number', minimum: 0, maximum: 1 },
    severityOverride: {
      type: ['string', 'null'],
      enum: [...SEVERITIES, null],
      description: '`null` when the triage agrees with the submitted severity.',
    },
    model: {
      type: 'string',
      description: '`<provider>:<model_name>`, e.g. `local:ssvc-2.0.3`, `policy:ssvc`',
    },
    triagedAt: isoDateTime,
    usage,
  },
  examples: [
    {
      priority: 'CRITICAL',
      recommendedAction: 'PATCH_IMMEDIATELY',
      reasoning: 'Log4Shell is in CISA KEV and exploited in the wild …',
      confidenceScore: 0.93,
      severityOverride: null,
      model: 'local:ssvc-2.0.3',
      triagedAt: '2026-11-21T19:15:07.123Z',
      usage: { inputTokens: 412, outputTokens: 96 },
    },
  ],
} as const;

const batchStatus = {
  type: 'string',
  enum: ['queued', 'running', 'completed', 'failed', 'partial'],
} as const;

export const batchAccepted = {
  description: 'Accepted; its AI calls are reserved. Poll `statusUrl` (also in `Location`).',
  type: 'object',
  required: ['batchId', 'status', 'total', 'statusUrl'],
  properties: {
    batchId: { type: 'string', format: 'uuid' },
    status: batchStatus,
    total: { type: 'integer', minimum: 1 },
    statusUrl: { type: 'string' },
  },
  examples: [
    {
      batchId: '5f0e2a9c-3d1b-4c7e-9a61-2b8d3f4e5a6b',
      status: 'queued',
      total: 2,
      statusUrl: '/api/v1/triage/batch/5f0e2a9c-3d1b-4c7e-9a61-2b8d3f4e5a6b',
    },
  ],
} as const;

export const batchView = {
  description: 'A batch and one page of its items, in index order.',
  type: 'object',
  required: ['batchId', 'status', 'total', 'completed', 'failed', 'createdAt', 'items', 'nextCursor'],
  properties: {
    batchId: { type: 'string', format: 'uuid' },
    status: batchStatus,
    total: { type: 'integer' },
    completed: { type: 'integer' },
    failed: { type: 'integer' },
    createdAt: isoDateTime,
    finishedAt: nullableDateTime,
    webhookStatus: {
      type: ['string', 'null'],
      description:
        '`null` without a webhook; `pending`, `delivered`, `http_<status>`, `timeout`, `network_error`, `dns_error`, `refused_url` or `refused_address`.',
    },
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['index', 'status'],
        properties: {
          index: { type: 'integer', minimum: 0 },
          status: { type: 'string' },
          result: triageAnswer,
          error: {
            type: 'object',
            properties: { code: { type: 'string' }, detail: { type: 'string' } },
          },
        },
      },
    },
    nextCursor: cursor,
  },
} as const;

/** `POST /api/v1/cases/triage`: 202 with a batch, or 200 `completed` when no case was selected. */
export const caseBatchAccepted = {
  description: 'The selected cases, triaged as a batch (poll `statusUrl`); `batchId` null when none fit.',
  type: 'object',
  required: ['batchId', 'status', 'requested', 'total', 'skippedForQuota', 'statusUrl'],
  properties: {
    batchId: { type: ['string', 'null'], format: 'uuid' },
    status: { type: 'string', enum: ['queued', 'completed'] },
    requested: { type: 'integer', description: 'Cases selected.' },
    total: { type: 'integer', description: 'Cases triaged: the batch items.' },
    skippedForQuota: { type: 'integer', description: 'Selected cases beyond the remaining AI calls.' },
    statusUrl: { type: ['string', 'null'] },
  },
} as const;
