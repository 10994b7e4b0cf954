import { randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import { withTransaction, type Db } from '../../../db/pool.js';
import { AppError, notFound } from '../../../lib/errors.js';
import { unsealSecret } from '../../../lib/secret-sealing.js';
import { hashToken, randomToken } from '../../keys/key-secrets.js';
import { insertAuditEvent } from '../../keys/keys-store.js';
import type { Role } from '../../../db/entities/index.js';
import { isRole } from '../roles.js';
import { insertMembership, insertUser } from '../workspace-store.js';
import { isOidcUnreachable, oidcFailureReason, type OidcClient, type OidcSettings } from './oidc-client.js';
import { emailDomain, isSsoRole, roleFromGroups } from './sso-roles.js';
import { SSO_SECRET_PURPOSE } from './sso-settings.js';
import * as store from './sso-store.js';

/** How long a person has between leaving for the provider and coming back. */
export const SIGN_IN_TTL_MS = 10 * 60_000;

/**
 * What a console user made by single sign-on has instead of a password hash: not `scrypt$…`,
 * so no password ever verifies against it (`password.ts`).
 */
export const NO_PASSWORD = 'sso-only';

export interface SsoSignInDeps {
  db: Db;
  pepper: string;
  clock: () => Date;
  oidc: OidcClient;
  redirectUri: string;
}

export interface RequestMeta {
  ip: string | null;
  userAgent: string | null;
}

function unavailable(): AppError {
  return new AppError('sso_unavailable', "The workspace's identity provider cannot be reached; try again.", {
    headers: { 'Retry-After': '30' },
  });
}

function failed(detail: string): AppError {
  return new AppError('sso_failed', detail);
}

function settingsOf(deps: SsoSignInDeps, row: store.SsoRow): OidcSettings {
  return {
    issuer: row.issuer,
    clientId: row.clientId,
    clientSecret:
      row.clientSecretSealed === null
        ? null
        : unsealSecret(deps.pepper, SSO_SECRET_PURPOSE, row.workspaceId, row.clientSecretSealed),
  };
}

/**
 * Starts a sign-in (docs/console.md#single-sign-on): finds the workspace by its slug or by the
 * domain of an email address, stores the state's hash with a fresh nonce and PKCE verifier,
 * bound to a new browser secret (returned, for a cookie), and answers the provider's URL.
 */
export async function startSsoSignIn(
  deps: SsoSignInDeps,
  by: { slug: string } | { email: string },
): Promise<{ authorizationUrl: string; browserSecret: string }> {
  const row = await store.findSsoBy(deps.db, 'slug' in by ? by : { domain: emailDomain(by.email) });
  if (!row || !row.enabled || row.deleting) throw notFound('workspace with single sign-on');
  const state = randomToken();
  const nonce = randomToken();
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const browserSecret = randomToken();
  let authorizationUrl: string;
  try {
    authorizationUrl = await deps.oidc.authorizationUrl(settingsOf(deps, row), {
      redirectUri: deps.redirectUri,
      state,
      nonce,
      codeVerifier,
      scope: 'openid email profile',
    });
  } catch (err) {
    if (isOidcUnreachable(err)) throw unavailable();
    throw new AppError('sso_unavailable', "The workspace's identity provider is not set up correctly.", {
      headers: { 'Retry-After': '300' },
      cause: err,
    });
  }
  const now = deps.clock();
  await store.insertSignIn(
    deps.db,
    {
      stateHash: hashToken(deps.pepper, `sso-state:${state}`),
      workspaceId: row.workspaceId,
      browserHash: hashToken(deps.pepper, `sso-browser:${browserSecret}`),
      nonce,
      codeVerifier,
      expiresAt: new Date(now.getTime() + SIGN_IN_TTL_MS),
    },
    now,
  );
  return { authorizationUrl, browserSecret };
}

/** Why a sign-in was refused, as the `sso_sign_in_failed` audit event names it. */
export type SignInFailure =
  | 'not_started_here'
  | 'other_browser'
  | 'state_used'
  | 'state_expired'
  | 'sso_disabled'
  | 'provider_unreachable'
  | 'not_verified'
  | 'no_email'
  | 'email_unverified'
  | 'not_a_member';

/**
 * Records a refused sign-in in the workspace it was for (docs/console.md#failed-sign-ins), in
 * its own statement: the refusal rolls nothing of it back. The details name the reason and
 * what the person claimed (email, the token check that failed), never a code, state, token or
 * secret.
 */
async function auditFailure(
  deps: SsoSignInDeps,
  workspaceId: string,
  meta: RequestMeta,
  reason: SignInFailure,
  details: Record<string, unknown> = {},
): Promise<void> {
  await insertAuditEvent(deps.db, {
    workspaceId,
    keyId: null,
    action: 'sso_sign_in_failed',
    actor: 'anonymous',
    ip: meta.ip,
    userAgent: meta.userAgent,
    details: { reason, ...details },
    at: deps.clock(),
  });
}

/**
 * Finishes a sign-in from the provider's callback: the state must be one this browser started
 * and not yet used; openid-client checks the response's issuer, exchanges the code with the
 * PKCE verifier and verifies the ID token (signature, issuer, audience, expiry, nonce). The
 * person is matched by the token's email, which the provider must call verified; a person who
 * is not a member joins only with auto-join on and an email of one of the workspace's domains.
 * The groups claim sets a member's role (an owner's never changes). Records `sso_sign_in`, or
 * `sso_sign_in_failed` with the reason in the workspace the sign-in was for (a state nobody
 * started names none, and is not recorded).
 */
export async function finishSsoSignIn(
  deps: SsoSignInDeps,
  input: { callbackUrl: URL; state: string; browserSecret: string | null; meta: RequestMeta },
): Promise<{ userId: string; workspaceId: string; role: Role }> {
  const now = deps.clock();
  const stateHash = hashToken(deps.pepper, `sso-state:${input.state}`);
  const browserHash = input.browserSecret
    ? hashToken(deps.pepper, `sso-browser:${input.browserSecret}`)
    : null;
  const pending = browserHash ? await store.takeSignIn(deps.db, stateHash, browserHash, now) : null;
  if (!pending) {
    const why = await store.whyNotTaken(deps.db, stateHash, browserHash, now);
    if (why) {
      await auditFailure(deps, why.workspaceId, input.meta, browserHash ? why.reason : 'not_started_here');
    }
    if (!browserHash) throw failed('This sign-in was not started in this browser; start again.');
    throw failed('This sign-in link was already used, has expired or is unknown; start again.');
  }
  const refuse = async (reason: SignInFailure, detail: string, details: Record<string, unknown> = {}) => {
    await auditFailure(deps, pending.workspaceId, input.meta, reason, details);
    return failed(detail);
  };
  const row = await store.findSso(deps.db, pending.workspaceId);
  if (!row || !row.enabled || row.deleting)
    throw await refuse('sso_disabled', 'Single sign-on is not enabled for this workspace.');
  let claims: oidc.IDToken;
  try {
    claims = await deps.oidc.exchange(settingsOf(deps, row), {
      callbackUrl: input.callbackUrl,
      redirectUri: deps.redirectUri,
      state: input.state,
      nonce: pending.nonce,
      codeVerifier: pending.codeVerifier,
    });
  } catch (err) {
    if (isOidcUnreachable(err)) {
      await auditFailure(deps, pending.workspaceId, input.meta, 'provider_unreachable', {
        issuer: row.issuer,
      });
      throw unavailable();
    }
    const check = oidcFailureReason(err);
    throw await refuse('not_verified', `The identity provider's answer could not be verified (${check}).`, {
      issuer: row.issuer,
      check,
    });
  }
  const email = typeof claims.email === 'string' ? claims.email.trim() : '';
  if (email === '' || email.length > 254)
    throw await refuse('no_email', 'The identity provider sent no email address.', { issuer: row.issuer });
  if (claims.email_verified !== true)
    throw await refuse(
      'email_unverified',
      'The identity provider does not say this email address is verified.',
      { issuer: row.issuer, email },
    );
  const mapped = roleFromGroups(claims, row.groupsClaim, row.groupRoles);

  const signedIn = await withTransaction(deps.db, async (tx) => {
    const person = await store.findPerson(tx, email, row.workspaceId);
    let userId = person?.userId ?? null;
    let joined = false;
    let role: Role | null = isRole(person?.role) ? person.role : null;
    if (role === null) {
      if (!row.autoJoin || !row.emailDomains.includes(emailDomain(email))) return null;
      if (userId === null) {
        userId = randomUUID();
        await insertUser(tx, { id: userId, email, passwordHash: NO_PASSWORD, createdAt: now });
      }
      role = mapped ?? (isSsoRole(row.defaultRole) ? row.defaultRole : 'viewer');
      await insertMembership(tx, { userId, workspaceId: row.workspaceId, role, createdAt: now });
      joined = true;
    } else if (mapped !== null && role !== 'owner' && role !== mapped) {
      await store.updateMemberRole(tx, userId!, row.workspaceId, mapped);
      role = mapped;
    }
    await insertAuditEvent(tx, {
      workspaceId: row.workspaceId,
      keyId: null,
      action: 'sso_sign_in',
      actor: `user:${userId}`,
      ip: input.meta.ip,
      userAgent: input.meta.userAgent,
      details: { email, issuer: row.issuer, role, joined },
      at: now,
    });
    return { userId: userId!, workspaceId: row.workspaceId, role };
  });
  if (signedIn === null) {
    throw await refuse(
      'not_a_member',
      'This person is not a member of the workspace; ask an admin for an invitation.',
      { issuer: row.issuer, email },
    );
  }
  return signedIn;
}
