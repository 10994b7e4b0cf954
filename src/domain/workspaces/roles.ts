import { ROLES, type Role } from '../../db/entities/index.js';
import type { Scope } from '../keys/scopes.js';

export { ROLES, type Role };

/**
 * The roles of docs/console.md#members-and-roles, from least to most: a viewer reads scans,
 * cases, exports and usage; a member also changes cases, uploads and triages; an admin also
 * manages keys, workflows and members; an owner also changes the plan and hands on
 * ownership. Each role may do all that the roles before it may.
 */
export function roleAtLeast(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/**
 * The least role that may do in the console what a key with `scope` may do through the API:
 * routes written once for both surfaces name a scope, and the console asks for this role.
 */
export const ROLE_FOR_SCOPE: Record<Scope, Role> = {
  'scans:read': 'viewer',
  'usage:read': 'viewer',
  'scans:write': 'member',
  'cases:write': 'member',
  'triage:write': 'member',
  'keys:write': 'admin',
  'workflows:write': 'admin',
};

/** The least role for a route that needs every scope of `scopes` (the highest of theirs). */
export function roleForScopes(scopes: Scope | readonly Scope[]): Role {
  const list: readonly Scope[] = typeof scopes === 'string' ? [scopes] : scopes;
  return list.reduce<Role>(
    (most, s) => (roleAtLeast(ROLE_FOR_SCOPE[s], most) ? ROLE_FOR_SCOPE[s] : most),
    'viewer',
  );
}
