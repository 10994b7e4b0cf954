import { ArrayType, EntitySchema } from '@mikro-orm/core';

/**
 * Records of the foundation (DECISIONS §3 to §5), as MikroORM entity schemas over the
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
  createdAt: Date;
}

export interface ConsoleUser {
  id: string;
  email: string;
  passwordHash: string;
  createdAt: Date;
}

export interface Membership {
  userId: string;
  workspaceId: string;
  role: string;
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

/** What an audit event records (DECISIONS §4, §10); `plan_change` events carry no key. */
export const AUDIT_ACTIONS = ['create', 'reveal', 'rotate', 'revoke', 'expire', 'plan_change'] as const;
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

const created = { type: 'Date', onCreate: () => new Date() } as const;

export const WorkspaceSchema = new EntitySchema<Workspace>({
  name: 'Workspace',
  tableName: 'workspaces',
  properties: {
    id: { type: 'uuid', primary: true },
    name: { type: 'string' },
    plan: { type: 'string' },
    trialEndsAt: { type: 'Date', nullable: true },
    status: { type: 'string' },
    rotationPolicyDays: { type: 'integer' },
    createdAt: created,
  },
});

export const ConsoleUserSchema = new EntitySchema<ConsoleUser>({
  name: 'ConsoleUser',
  tableName: 'console_users',
  properties: {
    id: { type: 'uuid', primary: true },
    email: { type: 'string' },
    passwordHash: { type: 'string' },
    createdAt: created,
  },
});

export const MembershipSchema = new EntitySchema<Membership>({
  name: 'Membership',
  tableName: 'memberships',
  properties: {
    userId: { type: 'uuid', primary: true },
    workspaceId: { type: 'uuid', primary: true },
    role: { type: 'string' },
    createdAt: created,
  },
});

export const ApiKeySchema = new EntitySchema<ApiKey>({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: { type: 'uuid', primary: true },
    workspaceId: { type: 'uuid' },
    label: { type: 'string' },
    keyHash: { type: 'string' },
    prefix: { type: 'string' },
    lastFour: { type: 'string' },
    scopes: { type: ArrayType },
    state: { type: 'string' },
    expiresAt: { type: 'Date', nullable: true },
    graceEndsAt: { type: 'Date', nullable: true },
    successorId: { type: 'uuid', nullable: true },
    createdAt: created,
    lastUsedAt: { type: 'Date', nullable: true },
    revokedAt: { type: 'Date', nullable: true },
  },
});

export const KeyAuditEventSchema = new EntitySchema<KeyAuditEvent>({
  name: 'KeyAuditEvent',
  tableName: 'key_audit_events',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true },
    workspaceId: { type: 'uuid' },
    keyId: { type: 'uuid', nullable: true },
    action: { type: 'string' },
    actor: { type: 'string' },
    ip: { type: 'string', nullable: true },
    userAgent: { type: 'string', nullable: true },
    details: { type: 'json' },
    at: created,
  },
});

export const PlanChangeSchema = new EntitySchema<PlanChange>({
  name: 'PlanChange',
  tableName: 'plan_changes',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true },
    workspaceId: { type: 'uuid' },
    fromPlan: { type: 'string', nullable: true },
    toPlan: { type: 'string' },
    reason: { type: 'string' },
    actor: { type: 'string' },
    at: created,
  },
});

export const entities = [
  WorkspaceSchema,
  ConsoleUserSchema,
  MembershipSchema,
  ApiKeySchema,
  KeyAuditEventSchema,
  PlanChangeSchema,
];
