import { describedPattern } from '../../lib/schema-patterns.js';
import { isoDateTime, nullableDateTime } from './responses.js';

/** Schemas of a workspace's end of life (docs/operations.md#end-of-life). */

export const deletionBody = {
  type: 'object',
  additionalProperties: false,
  required: ['confirmName'],
  properties: {
    confirmName: {
      type: 'string',
      minLength: 1,
      maxLength: 120,
      description: "The workspace's name, typed by the owner.",
      pattern: describedPattern('\\S', 'must not be blank'),
    },
  },
} as const;

const uuid = {
  type: 'string',
  pattern: describedPattern(
    '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
    'must be a UUID',
  ),
} as const;

export const deletionParams = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: uuid },
} as const;

/** The workspace to delete: only the session's own (another id is 404, as everywhere). */
export const workspaceParams = {
  type: 'object',
  additionalProperties: false,
  required: ['workspaceId'],
  properties: { workspaceId: uuid },
} as const;

export const deletionView = {
  description:
    'A workspace deletion: `pending` while its data is being removed, `finished` (with `finishedAt`) once nothing of it is left.',
  type: 'object',
  required: ['id', 'workspaceId', 'status', 'requestedAt', 'finishedAt', 'statusUrl'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    workspaceId: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: ['pending', 'finished'] },
    requestedAt: isoDateTime,
    finishedAt: nullableDateTime,
    scansRemoved: { type: 'integer' },
    filesRemoved: { type: 'integer' },
    statusUrl: { type: 'string', description: 'Poll it (no session needed: the id is the capability).' },
  },
} as const;

export const retentionBody = {
  type: 'object',
  additionalProperties: false,
  required: ['scanFileRetentionDays'],
  properties: {
    scanFileRetentionDays: {
      type: ['integer', 'null'],
      minimum: 1,
      maximum: 3650,
      description: "Days a completed scan's raw file is kept after its upload; null keeps it.",
    },
  },
} as const;

export const retentionView = {
  description: "The workspace's retention settings.",
  type: 'object',
  required: ['scanFileRetentionDays'],
  properties: { scanFileRetentionDays: { type: ['integer', 'null'] } },
} as const;

export const archiveFile = {
  description:
    "The workspace's records as one gzip-compressed tar: manifest.json, cases.jsonl, case-status-history.jsonl, case-triage-history.jsonl, audit-log.jsonl, usage-statement.json.",
  content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
} as const;
