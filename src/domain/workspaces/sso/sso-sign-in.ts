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

/**
 * Finishes a sign-in from the provider's callback: the state must be one this browser started
 * and not yet used; openid-client checks the response's issuer, exchanges the code with the
 * PKCE verifier and verifies the ID token (signature, issuer, audience, expiry, nonce). The
 * person is matched by the token's email, which the provider must call verified; a person who
 * is not a member joins only with auto-join on and an email of one of the workspace's domains.
 * The groups claim sets a member's role (an owner's never changes). Records `sso_sign_in`.
 */
export async function finishSsoSignIn(
  deps: SsoSignInDeps,
  input: { callbackUrl: URL; state: string; browserSecret: string | null; meta: RequestMeta },
): Promise<{ userId: string; workspaceId: string; role: Role }> {
  if (!input.browserSecret) throw failed('This sign-in was not started in this browser; start again.');
  const now = deps.clock();
  const pending = await store.takeSignIn(
    deps.db,
    hashToken(deps.pepper, `sso-state:${input.state}`),
    hashToken(deps.pepper, `sso-browser:${input.browserSecret}`),
    now,
  );
  if (!pending) throw failed('This sign-in link was already used, has expired or is unknown; start again.');
  const row = await store.findSso(deps.db, pending.workspaceId);
  if (!row || !row.enabled || row.deleting) throw failed('Single sign-on is not enabled for this workspace.');
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
    if (isOidcUnreachable(err)) throw unavailable();
    throw failed(`The identity provider's answer could not be verified (${oidcFailureReason(err)}).`);
  }
  const email = typeof claims.email === 'string' ? claims.email.trim() : '';
  if (email === '' || email.length > 254) throw failed('The identity provider sent no email address.');
  if (claims.email_verified !== true)
    throw failed('The identity provider does not say this email address is verified.');
  const mapped = roleFromGroups(claims, row.groupsClaim, row.groupRoles);

  return withTransaction(deps.db, async (tx) => {
    const person = await store.findPerson(tx, email, row.workspaceId);
    let userId = person?.userId ?? null;
    let joined = false;
    let role: Role | null = isRole(person?.role) ? person.role : null;
    if (role === null) {
      if (!row.autoJoin || !row.emailDomains.includes(emailDomain(email)))
        throw failed('This person is not a member of the workspace; ask an admin for an invitation.');
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
}
