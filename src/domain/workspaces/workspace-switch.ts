import type { Db } from '../../db/pool.js';
import { AppError, notFound } from '../../lib/errors.js';
import type { Role } from '../../db/entities/index.js';
import { findSwitchTarget } from './member-store.js';
import type { SignInMethod } from './workspace-store.js';

/** The session a switch starts from. */
export interface SwitchFrom {
  userId: string;
  workspaceId: string;
  signIn: SignInMethod;
}

/** Where a person signs in with a workspace's single sign-on: the sign-in page, its slug filled in. */
export function ssoSignInPath(slug: string): string {
  return `/login?sso=${encodeURIComponent(slug)}`;
}

/**
 * Whether a session may move to another of the person's workspaces, and in which role
 * (docs/console.md#sso-and-sessions). As with an organisation that enforces SAML, the person
 * stays signed in, but each workspace that requires single sign-on wants its own:
 *
 * - a session made by a workspace's SSO vouches for the person in that workspace only (that
 *   provider is run by that workspace's admins, who could assert any address): it moves nowhere
 *   else, and the person signs in to the other workspace itself;
 * - a password session moves to a workspace that requires SSO only when the person owns it
 *   (owners keep their password, docs/console.md#sso-required);
 * - another workspace's id, or one the person is not a member of, is 404.
 */
export async function switchRole(db: Db, from: SwitchFrom, workspaceId: string): Promise<Role> {
  const target = await findSwitchTarget(db, from.userId, workspaceId);
  if (!target) throw notFound('workspace');
  if (workspaceId === from.workspaceId) return target.role;
  if (target.ssoRequired && target.role !== 'owner') {
    throw new AppError(
      'sso_required',
      `${target.name} requires single sign-on: sign in with SSO (workspace "${target.ssoSlug}") at ` +
        `${ssoSignInPath(target.ssoSlug!)} to open it.`,
    );
  }
  if (from.signIn === 'sso') {
    const viaSso = target.ssoSlug ? ` or its single sign-on (${ssoSignInPath(target.ssoSlug)})` : '';
    throw new AppError(
      'sign_in_required',
      `You signed in with the single sign-on of another workspace, which vouches for you there only: ` +
        `sign in to ${target.name} with your password${viaSso} to open it.`,
    );
  }
  return target.role;
}
