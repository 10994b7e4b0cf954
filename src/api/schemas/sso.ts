import { describedPattern } from '../../lib/schema-patterns.js';
import { SSO_ROLES } from '../../domain/workspaces/sso/sso-roles.js';
import { SSO_SETTING_FIELDS } from '../../domain/workspaces/sso/sso-settings.js';
import { nullableDateTime, nullableString } from './responses.js';

/** Request and response schemas of single sign-on (docs/console.md#single-sign-on). */

const role = { type: 'string', enum: [...SSO_ROLES] } as const;
const slug = {
  type: 'string',
  minLength: 2,
  maxLength: 63,
  pattern: describedPattern('^[a-z0-9][a-z0-9-]{1,62}$', 'must be lower-case letters, digits and dashes'),
} as const;
const domain = {
  type: 'string',
  minLength: 3,
  maxLength: 253,
  pattern: describedPattern(
    '^(?=.{3,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$',
    'must be a domain name such as example.com',
  ),
} as const;
const email = {
  type: 'string',
  minLength: 3,
  maxLength: 254,
  pattern: describedPattern('^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', 'must be an email address'),
} as const;

/** `PUT /api/console/sso`: the whole settings; `clientSecret` left out keeps the stored one. */
export const ssoSettingsBody = {
  type: 'object',
  additionalProperties: false,
  required: [...SSO_SETTING_FIELDS],
  properties: {
    slug,
    issuer: { type: 'string', minLength: 8, maxLength: 2048 },
    clientId: {
      type: 'string',
      minLength: 1,
      maxLength: 512,
      pattern: describedPattern('^\\S+$', 'must not contain spaces'),
    },
    clientSecret: { type: ['string', 'null'], minLength: 1, maxLength: 1024 },
    enabled: { type: 'boolean' },
    ssoRequired: { type: 'boolean' },
    emailDomains: { type: 'array', maxItems: 20, uniqueItems: true, items: domain },
    autoJoin: { type: 'boolean' },
    defaultRole: role,
    groupsClaim: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      pattern: describedPattern('^[A-Za-z0-9_:./-]+$', 'must be a claim name'),
    },
    groupRoles: {
      type: 'object',
      maxProperties: 100,
      propertyNames: { type: 'string', minLength: 1, maxLength: 256 },
      additionalProperties: role,
    },
  },
} as const;

/** `POST /api/console/sso/start`: the workspace's slug, or an email address of its domain. */
export const ssoStartBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  maxProperties: 1,
  properties: { workspace: slug, email },
} as const;

/**
 * The provider's redirect back. Providers add parameters of their own (Keycloak's
 * `session_state`, Google's `authuser`, `hd`, `prompt`), so others are let through, bounded.
 */
export const ssoCallbackQuery = {
  type: 'object',
  required: ['state'],
  maxProperties: 12,
  properties: {
    state: { type: 'string', minLength: 20, maxLength: 100 },
    code: { type: 'string', minLength: 1, maxLength: 2048 },
    iss: { type: 'string', maxLength: 2048 },
    error: { type: 'string', maxLength: 100 },
    error_description: { type: 'string', maxLength: 1000 },
  },
  additionalProperties: { type: 'string', maxLength: 2048 },
} as const;

export const ssoSettingsView = {
  description: "The workspace's single sign-on settings; the client secret is never returned.",
  type: 'object',
  required: [
    'object',
    'configured',
    'redirectUri',
    'slug',
    'issuer',
    'clientId',
    'clientSecretSet',
    'enabled',
    'ssoRequired',
    'emailDomains',
    'autoJoin',
    'defaultRole',
    'groupsClaim',
    'groupRoles',
    'updatedAt',
  ],
  properties: {
    object: { type: 'string', enum: ['sso_settings'] },
    configured: { type: 'boolean' },
    redirectUri: { type: 'string', description: 'Register this as the redirect URI at the provider.' },
    slug: nullableString,
    issuer: nullableString,
    clientId: nullableString,
    clientSecretSet: { type: 'boolean' },
    enabled: { type: 'boolean' },
    ssoRequired: { type: 'boolean' },
    emailDomains: { type: 'array', items: { type: 'string' } },
    autoJoin: { type: 'boolean' },
    defaultRole: { type: 'string' },
    groupsClaim: { type: 'string' },
    groupRoles: { type: 'object', additionalProperties: { type: 'string' } },
    updatedAt: nullableDateTime,
  },
} as const;

export const ssoStarted = {
  description: "Where to send the browser: the identity provider's authorization URL (cookie set).",
  type: 'object',
  required: ['authorizationUrl'],
  properties: { authorizationUrl: { type: 'string' } },
} as const;
