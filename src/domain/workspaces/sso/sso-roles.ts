import { roleAtLeast } from '../roles.js';

/**
 * Roles single sign-on may give (docs/console.md#single-sign-on): never `owner`, which only moves
 * by an ownership transfer, so a provider's groups can never take a workspace from its owners.
 */
export const SSO_ROLES = ['admin', 'member', 'viewer'] as const;
export type SsoRole = (typeof SSO_ROLES)[number];

export function isSsoRole(value: unknown): value is SsoRole {
  return typeof value === 'string' && (SSO_ROLES as readonly string[]).includes(value);
}

/**
 * The role the groups claim maps to: the highest of the roles of the person's groups that
 * `groupRoles` names, or null when none is named (or the claim is missing or not strings).
 * A provider may send one group as a string instead of a list.
 */
export function roleFromGroups(
  claims: Record<string, unknown>,
  groupsClaim: string,
  groupRoles: Readonly<Record<string, string>>,
): SsoRole | null {
  const raw = claims[groupsClaim];
  const groups = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw : [];
  let best: SsoRole | null = null;
  for (const group of groups) {
    if (typeof group !== 'string' || !Object.hasOwn(groupRoles, group)) continue;
    const role = groupRoles[group];
    if (isSsoRole(role) && (best === null || roleAtLeast(role, best))) best = role;
  }
  return best;
}

/** The domain of an email address, lower-cased ('' when there is no `@`). */
export function emailDomain(email: string): string {
  const at = email.lastIndexOf('@');
  return at < 0 ? '' : email.slice(at + 1).toLowerCase();
}
