import { decimalString, isoDateTime, nullableDateTime } from './responses.js';
import { usageTotals } from './keys-responses.js';

/** Response shapes of the console JSON API (`/api/console`, DECISIONS §3). */

const plan = { type: 'string', enum: ['free', 'trial', 'service'] } as const;

export const signedUp = {
  description: 'The workspace, the one-time reveal page of its first key, and the session (cookie).',
  type: 'object',
  required: ['workspace', 'revealUrl', 'csrfToken'],
  properties: {
    workspace: {
      type: 'object',
      required: ['id', 'name', 'plan'],
      properties: {
        id: { type: 'string', format: 'uuid' },
        name: { type: 'string' },
        plan,
        trialEndsAt: nullableDateTime,
      },
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
  required: ['userId', 'workspaceId', 'csrfToken', 'expiresAt'],
  properties: {
    userId: { type: 'string' },
    workspaceId: { type: 'string' },
    csrfToken: { type: 'string' },
    expiresAt: isoDateTime,
  },
} as const;

export const workspaceView = {
  description: 'Settings > API keys: the workspace card.',
  type: 'object',
  required: ['id', 'name', 'plan', 'status', 'activeKeys', 'aiCallsThisMonth', 'aiCallLimit'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    plan,
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
