import { ArrayType, EntitySchema } from '@mikro-orm/core';
import { InhouseGateRecordSchema } from './inhouse-gate-record.js';
import { WorkspaceDeletionSchema } from './workspace-deletion.js';

/**
 * Records of the foundation (docs/console.md#sign-up-and-api-keys, docs/api.md#keys, docs/triage.md#usage), as MikroORM entity schemas over the
 * tables of the checked-in migrations. Hot paths (key lookup, quotas, counters) use
 * set-based SQL instead of the unit of work; these entities serve the rest.
 */
export type PlanName = 'free' | 'trial' | 'service';
export type KeyState = 'active' | 'rotating' | 'expired' | 'revoked';

export interface Workspace {
  id: string;
  name: string;
  plan: PlanName;
  trialEndsAt: Date | null;
  status: 'active' | 'suspended';
  rotationPolicyDays: number;
  /** Days raw scan files are kept (docs/operations.md#retention); null keeps them. */
  scanFileRetentionDays?: number | null;
  createdAt: Date;
}

export interface ConsoleUser {
  id: string;
  email: string;
  passwordHash: string;
  createdAt: Date;
}

/**
 * A member's role in a workspace, from least to most (docs/console.md#members-and-roles):
 * each may do what the one before it may, and more.
 */
export const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

export interface Membership {
  userId: string;
  workspaceId: string;
  role: Role;
  createdAt: Date;
}

export interface ApiKey {
  id: string;
  workspaceId: string;
  label: string;
  keyHash: string;
  prefix: string;
  lastFour: string;
  scopes: string[];
  state: KeyState;
  expiresAt: Date | null;
  graceEndsAt: Date | null;
  successorId: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/**
 * What an audit event records (docs/api.md#audit-log, docs/workflows.md); `plan_change` and `workflow_*` events carry
 * no key (a workflow event names its workflow in `details`).
 */
export const AUDIT_ACTIONS = [
  'create',
  'reveal',
  'rotate',
  'revoke',
  'expire',
  'plan_change',
  'workflow_create',
  'workflow_update',
  'workflow_enable',
  'workflow_disable',
  'workflow_delete',
  'scan_delete',
  'invitation_create',
  'invitation_revoke',
  'invitation_accept',
  'member_remove',
  'member_role_change',
  'ownership_transfer',
  'password_reset_request',
  'password_reset',
  'sso_update',
  'sso_sign_in',
  'workspace_delete',
  'retention_change',
  'sla_policy_change',
  'sso_sign_in_failed',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface KeyAuditEvent {
  id?: string;
  workspaceId: string;
  keyId: string | null;
  action: AuditAction;
  actor: string;
  ip: string | null;
  userAgent: string | null;
  details: Record<string, unknown>;
  at: Date;
}

export interface PlanChange {
  id?: string;
  workspaceId: string;
  fromPlan: PlanName | null;
  toPlan: PlanName;
  reason: string;
  actor: string;
  at: Date;
}

/**
 * The column metadata below mirrors the migrations exactly (types, defaults, checks, indexes,
 * foreign keys with PostgreSQL's own constraint names), so MikroORM's schema diff against a
 * migrated database is empty: test/integration/db/entities-match-schema.test.ts.
 * The migrations stay the source of truth; these declarations only describe them.
 */
const text = { type: 'text' } as const;
const nullableText = { type: 'text', nullable: true } as const;
const timestamp = { type: 'Date', columnType: 'timestamptz' } as const;
const nullableTimestamp = { ...timestamp, nullable: true } as const;
const created = { ...timestamp, defaultRaw: 'now()', onCreate: () => new Date() } as const;

/**
 * A uuid column holding another row's id, declared as a relation mapped to the primary key:
 * the TypeScript type stays `string`, and MikroORM knows the foreign key (deferred, as in
 * the migrations, so the unit of work may insert rows in any order within a transaction).
 */
function reference(
  table: string,
  column: string,
  entity: () => EntitySchema<any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  options: { nullable?: boolean; deleteRule?: 'cascade'; primary?: boolean } = {},
) {
  return {
    kind: 'm:1',
    entity,
    mapToPk: true,
    fieldName: column,
    foreignKeyName: `${table}_${column}_fkey`,
    deferMode: 'deferred',
    // The migrations declare no ON UPDATE and ON DELETE CASCADE or nothing: MikroORM's
    // defaults (update cascade, delete set null when nullable) would differ.
    updateRule: 'no action',
    deleteRule: options.deleteRule ?? 'no action',
    ...(options.nullable ? { nullable: true } : {}),
    ...(options.primary ? { primary: true } : {}),
  } as const;
}

const PLANS = ['free', 'trial', 'service'] as const;
const KEY_STATES = ['active', 'rotating', 'expired', 'revoked'] as const;

export const WorkspaceSchema = new EntitySchema<Workspace>({
  name: 'Workspace',
  tableName: 'workspaces',
  properties: {
    id: { type: 'uuid', primary: true },
    name: text,
    plan: { enum: true, items: [...PLANS], columnType: 'text' },
    trialEndsAt: nullableTimestamp,
    status: { enum: true, items: ['active', 'suspended'], columnType: 'text', default: 'active' },
    rotationPolicyDays: { type: 'integer', default: 90 },
    scanFileRetentionDays: { type: 'integer', nullable: true },
    createdAt: created,
  },
  checks: [
    { name: 'workspaces_name_check', expression: '(length(name) >= 1) AND (length(name) <= 120)' },
    {
      name: 'workspaces_rotation_policy_days_check',
      expression: '(rotation_policy_days >= 15) AND (rotation_policy_days <= 3650)',
    },
    {
      name: 'workspaces_scan_file_retention_days_check',
      expression: '(scan_file_retention_days >= 1) AND (scan_file_retention_days <= 3650)',
    },
  ],
});

export const ConsoleUserSchema = new EntitySchema<ConsoleUser>({
  name: 'ConsoleUser',
  tableName: 'console_users',
  properties: {
    id: { type: 'uuid', primary: true },
    email: text,
    passwordHash: text,
    createdAt: created,
  },
  // Emails are unique whatever their case: an expression index, which MikroORM compares by name.
  indexes: [
    {
      name: 'console_users_email_key',
      expression: 'CREATE UNIQUE INDEX console_users_email_key ON console_users (lower(email))',
    },
  ],
});

export const MembershipSchema = new EntitySchema<Membership>({
  name: 'Membership',
  tableName: 'memberships',
  properties: {
    userId: reference('memberships', 'user_id', () => ConsoleUserSchema, {
      primary: true,
      deleteRule: 'cascade',
    }),
    workspaceId: reference('memberships', 'workspace_id', () => WorkspaceSchema, {
      primary: true,
      deleteRule: 'cascade',
    }),
    role: { enum: true, items: [...ROLES], columnType: 'text', default: 'owner' },
    createdAt: created,
  },
  indexes: [{ name: 'memberships_workspace_idx', properties: ['workspaceId'] }],
});

export const ApiKeySchema: EntitySchema<ApiKey> = new EntitySchema<ApiKey>({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: { type: 'uuid', primary: true },
    workspaceId: reference('api_keys', 'workspace_id', () => WorkspaceSchema, { deleteRule: 'cascade' }),
    label: text,
    keyHash: text,
    prefix: text,
    lastFour: text,
    scopes: { type: ArrayType },
    state: { enum: true, items: [...KEY_STATES], columnType: 'text' },
    expiresAt: nullableTimestamp,
    graceEndsAt: nullableTimestamp,
    successorId: reference('api_keys', 'successor_id', () => ApiKeySchema, { nullable: true }),
    createdAt: created,
    lastUsedAt: nullableTimestamp,
    revokedAt: nullableTimestamp,
  },
  uniques: [{ name: 'api_keys_key_hash_key', properties: ['keyHash'] }],
  indexes: [{ name: 'api_keys_workspace_idx', properties: ['workspaceId', 'createdAt'] }],
});

export const KeyAuditEventSchema = new EntitySchema<KeyAuditEvent>({
  name: 'KeyAuditEvent',
  tableName: 'key_audit_events',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true },
    workspaceId: reference('key_audit_events', 'workspace_id', () => WorkspaceSchema, {
      deleteRule: 'cascade',
    }),
    keyId: reference('key_audit_events', 'key_id', () => ApiKeySchema, {
      nullable: true,
      deleteRule: 'cascade',
    }),
    action: { enum: true, items: [...AUDIT_ACTIONS], columnType: 'text' },
    actor: text,
    ip: nullableText,
    userAgent: nullableText,
    details: { type: 'json', default: '{}' },
    at: created,
  },
  indexes: [
    { name: 'key_audit_events_ws_idx', properties: ['workspaceId', 'at'] },
    {
      name: 'key_audit_events_ws_id_idx',
      expression: 'CREATE INDEX key_audit_events_ws_id_idx ON key_audit_events (workspace_id, id DESC)',
    },
  ],
});

export const PlanChangeSchema = new EntitySchema<PlanChange>({
  name: 'PlanChange',
  tableName: 'plan_changes',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true },
    workspaceId: reference('plan_changes', 'workspace_id', () => WorkspaceSchema, {
      deleteRule: 'cascade',
    }),
    fromPlan: nullableText,
    toPlan: text,
    reason: text,
    actor: text,
    at: created,
  },
});

/** An invitation to a workspace (docs/console.md#invitations): only the HMAC of its token is kept. */
export interface Invitation {
  id: string;
  workspaceId: string;
  email: string;
  role: Role;
  tokenHash: string;
  /** Who invited: `user:<id>` or `operator`. */
  invitedBy: string;
  createdAt: Date;
  expiresAt: Date;
  acceptedAt: Date | null;
  revokedAt: Date | null;
}

export const InvitationSchema = new EntitySchema<Invitation>({
  name: 'Invitation',
  tableName: 'invitations',
  properties: {
    id: { type: 'uuid', primary: true },
    workspaceId: reference('invitations', 'workspace_id', () => WorkspaceSchema, { deleteRule: 'cascade' }),
    email: text,
    role: { enum: true, items: [...ROLES], columnType: 'text' },
    tokenHash: text,
    invitedBy: text,
    createdAt: created,
    expiresAt: timestamp,
    acceptedAt: nullableTimestamp,
    revokedAt: nullableTimestamp,
  },
  checks: [
    { name: 'invitations_email_check', expression: '(length(email) >= 3) AND (length(email) <= 254)' },
  ],
  indexes: [
    {
      name: 'invitations_token_hash_key',
      expression: 'CREATE UNIQUE INDEX invitations_token_hash_key ON invitations (token_hash)',
    },
    { name: 'invitations_workspace_idx', properties: ['workspaceId', 'createdAt'] },
  ],
});

/** A password reset (docs/console.md#password-reset): only the HMAC of its token is kept. */
export interface PasswordReset {
  id: string;
  userId: string;
  tokenHash: string;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

export const PasswordResetSchema = new EntitySchema<PasswordReset>({
  name: 'PasswordReset',
  tableName: 'password_resets',
  properties: {
    id: { type: 'uuid', primary: true },
    userId: reference('password_resets', 'user_id', () => ConsoleUserSchema, { deleteRule: 'cascade' }),
    tokenHash: text,
    createdAt: created,
    expiresAt: timestamp,
    usedAt: nullableTimestamp,
  },
  indexes: [
    {
      name: 'password_resets_token_hash_key',
      expression: 'CREATE UNIQUE INDEX password_resets_token_hash_key ON password_resets (token_hash)',
    },
    { name: 'password_resets_user_idx', properties: ['userId'] },
  ],
});

export const entities = [
  WorkspaceSchema,
  ConsoleUserSchema,
  MembershipSchema,
  ApiKeySchema,
  KeyAuditEventSchema,
  PlanChangeSchema,
  InhouseGateRecordSchema,
  InvitationSchema,
  PasswordResetSchema,
  WorkspaceDeletionSchema,
];
