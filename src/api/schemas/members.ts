import { describedPattern } from '../../lib/schema-patterns.js';
import { ROLES } from '../../domain/workspaces/roles.js';
import { isoDateTime, listOf } from './responses.js';

/** Request and response schemas of members, invitations, the workspace switcher and password reset (docs/console.md#members-and-roles). */

const email = {
  type: 'string',
  minLength: 3,
  maxLength: 254,
  pattern: describedPattern('^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', 'must be an email address'),
} as const;
const role = { type: 'string', enum: [...ROLES] } as const;
const newPassword = { type: 'string', minLength: 10, maxLength: 256 } as const;
/** Tokens of our links are base64url; anything else is refused before a lookup. */
const token = {
  type: 'string',
  minLength: 16,
  maxLength: 100,
  pattern: describedPattern('^[A-Za-z0-9_-]+$', 'must be a link token'),
} as const;

export const userIdParams = {
  type: 'object',
  required: ['userId'],
  properties: { userId: { type: 'string', maxLength: 100 } },
} as const;
export const invitationIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', maxLength: 100 } },
} as const;
export const tokenParams = { type: 'object', required: ['token'], properties: { token } } as const;

export const roleBody = {
  type: 'object',
  additionalProperties: false,
  required: ['role'],
  properties: { role },
} as const;
export const ownershipBody = {
  type: 'object',
  additionalProperties: false,
  required: ['userId'],
  properties: { userId: { type: 'string', maxLength: 100 } },
} as const;
export const inviteBody = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'role'],
  properties: { email, role },
} as const;
export const acceptBody = {
  type: 'object',
  additionalProperties: false,
  properties: { password: newPassword },
} as const;
export const switchBody = {
  type: 'object',
  additionalProperties: false,
  required: ['workspaceId'],
  properties: { workspaceId: { type: 'string', maxLength: 100 } },
} as const;
export const resetRequestBody = {
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: { email },
} as const;
export const resetBody = {
  type: 'object',
  additionalProperties: false,
  required: ['password'],
  properties: { password: newPassword },
} as const;

const member = {
  type: 'object',
  required: ['userId', 'email', 'role', 'joinedAt'],
  properties: { userId: { type: 'string' }, email: { type: 'string' }, role, joinedAt: isoDateTime },
} as const;
export const memberView = { description: 'A member of the workspace.', ...member } as const;
export const memberList = { description: "The workspace's members.", ...listOf(member, false) } as const;

const invitation = {
  type: 'object',
  required: ['id', 'email', 'role', 'invitedBy', 'createdAt', 'expiresAt'],
  properties: {
    id: { type: 'string' },
    email: { type: 'string' },
    role,
    invitedBy: { type: 'string', description: '`user:<id>` or `operator`' },
    createdAt: isoDateTime,
    expiresAt: isoDateTime,
  },
} as const;
export const invitationList = {
  description: 'Invitations not yet accepted, revoked or expired.',
  ...listOf(invitation, false),
} as const;
export const invitationCreated = {
  description: 'The invitation; `invitationUrl` is shown this once (it is also emailed when SMTP is set).',
  type: 'object',
  required: [...invitation.required, 'invitationUrl', 'emailed'],
  properties: {
    ...invitation.properties,
    invitationUrl: { type: 'string' },
    emailed: { type: 'boolean', description: 'Whether the link was emailed to the address.' },
  },
} as const;
export const invitationPreview = {
  description: 'Who invites, to which workspace, as what.',
  type: 'object',
  required: ['workspaceName', 'email', 'role', 'invitedBy', 'expiresAt', 'hasAccount'],
  properties: {
    workspaceName: { type: 'string' },
    email: { type: 'string' },
    role,
    invitedBy: { type: 'string' },
    expiresAt: isoDateTime,
    hasAccount: { type: 'boolean', description: 'The address has an account: accept with its password.' },
  },
} as const;
export const joined = {
  description: 'The workspace joined or switched to, and the new session (cookie).',
  type: 'object',
  required: ['workspaceId', 'csrfToken'],
  properties: { workspaceId: { type: 'string' }, csrfToken: { type: 'string' } },
} as const;
export const workspaceList = {
  description: "The signed-in person's workspaces.",
  ...listOf(
    {
      type: 'object',
      required: ['id', 'name', 'role', 'current'],
      properties: { id: { type: 'string' }, name: { type: 'string' }, role, current: { type: 'boolean' } },
    },
    false,
  ),
} as const;
export const accepted202 = {
  description: 'Accepted: a link is emailed if the address has an account.',
  type: 'null',
} as const;
export const noContent = { description: 'Done.', type: 'null' } as const;
