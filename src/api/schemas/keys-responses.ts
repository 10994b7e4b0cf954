import { AUDIT_ACTIONS } from '../../db/entities/index.js';
import { SCOPES } from '../../domain/keys/scopes.js';
import { decimalString, isoDateTime, listOf, nullableDateTime, nullableString } from './responses.js';

/**
 * Response shapes of key management, `/api/v1/keys/me`, `/api/v1/usage`, `/api/v1/models` and
 * the audit log (docs/api.md#audit-log, docs/triage.md#usage), as `viewKey` and the routes build them.
 */

/** A workspace as every answer that names one shows it, before what that answer adds. */
export const workspaceIdentity = {
  id: { type: 'string', format: 'uuid' },
  name: { type: 'string' },
  plan: { type: 'string', enum: ['free', 'trial', 'service'] },
} as const;

const keyProperties = {
  id: { type: 'string', format: 'uuid' },
  label: { type: 'string' },
  masked: { type: 'string', description: 'The first 8 characters, asterisks, the last 4.' },
  scopes: { type: 'array', items: { type: 'string', enum: [...SCOPES] } },
  status: { type: 'string', enum: ['active', 'rotating', 'expired', 'revoked'] },
  rotationHealth: { type: 'string', enum: ['healthy', 'due', 'overdue'] },
  createdAt: isoDateTime,
  expiresAt: nullableDateTime,
  lastUsedAt: nullableDateTime,
  graceEndsAt: nullableDateTime,
  successorId: { type: ['string', 'null'] },
  revokedAt: nullableDateTime,
} as const;

const keyRequired = ['id', 'label', 'masked', 'scopes', 'status', 'rotationHealth', 'createdAt'] as const;

export const keyView = {
  description: 'A key as every answer shows it: never the secret, always the mask.',
  type: 'object',
  required: [...keyRequired],
  properties: keyProperties,
} as const;

const keyUsage = {
  type: 'object',
  properties: { requests: { type: 'integer' }, tokens: { type: 'integer' }, spendUsd: decimalString },
} as const;

export const keyList = listOf(
  { type: 'object', required: [...keyRequired, 'usage'], properties: { ...keyProperties, usage: keyUsage } },
  false,
);

/** A new key: the secret once in `key` (API) or behind `revealUrl` (console). */
const newKey = {
  type: 'object',
  required: [...keyRequired],
  properties: {
    ...keyProperties,
    key: { type: 'string', description: 'The secret, shown once (`/api/v1/keys` only).' },
    revealUrl: { type: 'string', description: 'The one-time reveal page (console only).' },
  },
} as const;

export const keyCreated = { ...newKey, description: 'The new key.' } as const;

export const keyRotated = {
  description: 'The old key (rotating until its grace ends) and its successor.',
  type: 'object',
  required: ['rotated', 'successor'],
  properties: { rotated: keyView, successor: newKey },
} as const;

export const keyRevealed = {
  description: 'The full key, once.',
  type: 'object',
  required: ['keyId', 'key', 'masked'],
  properties: {
    keyId: { type: 'string', format: 'uuid' },
    key: { type: 'string' },
    masked: { type: 'string' },
  },
} as const;

export const keyMe = {
  description: 'The calling key and its workspace.',
  type: 'object',
  required: [...keyRequired, 'workspace', 'asOf'],
  properties: {
    ...keyProperties,
    asOf: {
      ...isoDateTime,
      description:
        '`lastUsedAt` includes every use of the key before this instant (the key is cached for up to KEY_CACHE_TTL_MS and uses are counted in batches).',
    },
    workspace: {
      type: 'object',
      required: ['id', 'name', 'plan'],
      properties: { ...workspaceIdentity, trialDaysLeft: { type: ['integer', 'null'] } },
    },
  },
} as const;

/** Totals over a period (`UsageTotals`): spend as exact decimal strings. */
export const usageTotals = {
  requests: { type: 'integer' },
  aiCalls: { type: 'integer' },
  inputTokens: { type: 'integer' },
  outputTokens: { type: 'integer' },
  spendMicros: { type: 'string', pattern: '^\\d+$', description: 'Integer micro-dollars.' },
  spendUsd: decimalString,
} as const;

const daily = {
  type: 'array',
  items: {
    type: 'object',
    required: ['date', 'requests', 'aiCalls'],
    properties: { date: { type: 'string', format: 'date' }, ...usageTotals },
  },
} as const;

export const usageReport = {
  description: 'Usage of the key and of its workspace over [from, to] (UTC days).',
  type: 'object',
  required: ['asOf', 'from', 'to', 'key', 'workspace'],
  properties: {
    asOf: {
      ...isoDateTime,
      description:
        '`requests` include every request before this instant (counted in batches every second); AI calls, tokens and spend are exact.',
    },
    from: { type: 'string', format: 'date' },
    to: { type: 'string', format: 'date' },
    key: {
      type: 'object',
      required: ['id', 'requests', 'aiCalls', 'spendUsd', 'daily'],
      properties: { id: { type: 'string' }, label: { type: 'string' }, ...usageTotals, daily },
    },
    workspace: {
      type: 'object',
      required: ['id', 'plan', 'aiCallLimit', 'aiCallsThisMonth', 'aiCallsRemaining', 'daily'],
      properties: {
        id: { type: 'string' },
        plan: { type: 'string' },
        ...usageTotals,
        aiCallLimit: { type: 'integer' },
        aiCallsThisMonth: { type: 'integer' },
        aiCallsRemaining: { type: 'integer' },
        daily,
      },
    },
  },
} as const;

export const modelList = listOf(
  {
    type: 'object',
    required: ['id', 'object', 'name', 'pricing', 'max'],
    properties: {
      id: { type: 'string', examples: ['svc-triage-v1'] },
      object: { type: 'string', const: 'model' },
      name: { type: 'string' },
      stage: { type: 'string' },
      default: { type: 'boolean' },
      routineTier: { type: 'boolean' },
      description: { type: 'string' },
      pricing: {
        type: 'object',
        required: ['currency', 'unit', 'input', 'output'],
        properties: {
          currency: { type: 'string', const: 'USD' },
          unit: { type: 'string', const: '1M tokens' },
          input: decimalString,
          output: decimalString,
        },
      },
      minimumTier: { type: 'string' },
      max: { type: 'integer', description: 'Most input tokens a finding may take.' },
    },
  },
  false,
);

export const auditEventList = listOf({
  type: 'object',
  required: ['object', 'id', 'at', 'action', 'actor'],
  properties: {
    object: { type: 'string', const: 'audit_event' },
    id: { type: 'string' },
    at: isoDateTime,
    action: { type: 'string', enum: [...AUDIT_ACTIONS] },
    actor: {
      type: 'string',
      description: '`user:<id>`, `key:<id>`, `operator`, `system`, or `anonymous` (a refused SSO sign-in)',
    },
    ip: nullableString,
    userAgent: nullableString,
    keyId: { type: ['string', 'null'] },
    details: { type: 'object' },
  },
});
