import { describedPattern } from '../../lib/schema-patterns.js';

/** Request schemas of the console JSON API (docs/console.md#console-json-api). */
const email = {
  type: 'string',
  minLength: 3,
  maxLength: 254,
  pattern: describedPattern('^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', 'must be an email address'),
} as const;

export const signupBody = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'password', 'workspaceName', 'plan'],
  properties: {
    email,
    password: { type: 'string', minLength: 10, maxLength: 256 },
    workspaceName: {
      type: 'string',
      minLength: 1,
      maxLength: 120,
      pattern: describedPattern('\\S', 'must not be blank'),
    },
    plan: { type: 'string', enum: ['free', 'trial'] },
  },
} as const;

export const loginBody = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'password'],
  properties: { email, password: { type: 'string', minLength: 1, maxLength: 256 } },
} as const;

export const planBody = {
  type: 'object',
  additionalProperties: false,
  required: ['plan'],
  properties: { plan: { type: 'string', enum: ['free', 'service'] } },
} as const;

export const statementQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    month: {
      type: 'string',
      pattern: describedPattern('^\\d{4}-(0[1-9]|1[0-2])$', 'must be a month as YYYY-MM'),
    },
  },
} as const;

/** `GET /api/console/reveal/:token`: the one-time token from the reveal link. */
export const revealParams = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string', maxLength: 100 } },
} as const;
