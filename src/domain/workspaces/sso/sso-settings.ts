import { withTransaction, type Db } from '../../../db/pool.js';
import { AppError, invalidRequest, type FieldError } from '../../../lib/errors.js';
import { outboundUrlProblem, type OutboundUrlOptions } from '../../../lib/outbound-url.js';
import { sealSecret } from '../../../lib/secret-sealing.js';
import { insertAuditEvent } from '../../keys/keys-store.js';
import type { Actor } from '../../keys/key-service.js';
import { isOidcUnreachable, type OidcClient } from './oidc-client.js';
import { findSso, upsertSso, type SsoRow } from './sso-store.js';
import { deleteSessionsWithoutSso } from '../workspace-store.js';
import type { SsoRole } from './sso-roles.js';

/** The sealing label of client secrets, bound to the workspace's id (`lib/secret-sealing.ts`). */
export const SSO_SECRET_PURPOSE = 'sso-client-secret:v1';

/** Settings as an admin sends them; `clientSecret` absent keeps the stored one, null removes it. */
/** The settings a `PUT` gives whole (the client secret aside) and an audit event names when changed. */
export const SSO_SETTING_FIELDS = [
  'slug',
  'issuer',
  'clientId',
  'enabled',
  'ssoRequired',
  'emailDomains',
  'autoJoin',
  'defaultRole',
  'groupsClaim',
  'groupRoles',
] as const;

export interface SsoSettingsInput {
  slug: string;
  issuer: string;
  clientId: string;
  clientSecret?: string | null;
  enabled: boolean;
  ssoRequired: boolean;
  emailDomains: string[];
  autoJoin: boolean;
  defaultRole: SsoRole;
  groupsClaim: string;
  groupRoles: Record<string, SsoRole>;
}

/** Settings as they are shown: the secret never, only whether one is set. */
export interface SsoSettingsView {
  object: 'sso_settings';
  configured: boolean;
  /** What to register at the provider as the redirect (callback) URI. */
  redirectUri: string;
  slug: string | null;
  issuer: string | null;
  clientId: string | null;
  clientSecretSet: boolean;
  enabled: boolean;
  ssoRequired: boolean;
  emailDomains: string[];
  autoJoin: boolean;
  defaultRole: string;
  groupsClaim: string;
  groupRoles: Record<string, string>;
  updatedAt: string | null;
}

export interface SsoSettingsDeps {
  db: Db;
  pepper: string;
  clock: () => Date;
  oidc: OidcClient;
  redirectUri: string;
  outbound: OutboundUrlOptions;
}

export function settingsView(row: SsoRow | null, redirectUri: string): SsoSettingsView {
  return {
    object: 'sso_settings',
    configured: row !== null,
    redirectUri,
    slug: row?.slug ?? null,
    issuer: row?.issuer ?? null,
    clientId: row?.clientId ?? null,
    clientSecretSet: row?.clientSecretSealed != null,
    enabled: row?.enabled ?? false,
    ssoRequired: row?.ssoRequired ?? false,
    emailDomains: row?.emailDomains ?? [],
    autoJoin: row?.autoJoin ?? false,
    defaultRole: row?.defaultRole ?? 'member',
    groupsClaim: row?.groupsClaim ?? 'groups',
    groupRoles: row?.groupRoles ?? {},
    updatedAt: row?.updatedAt.toISOString() ?? null,
  };
}

/** The names of the settings that differ (what the audit event records: names, never values). */
function changedFields(before: SsoRow | null, after: SsoRow, secretTouched: boolean): string[] {
  const b = before ? settingsView(before, '') : null;
  const a = settingsView(after, '');
  const changed: string[] = SSO_SETTING_FIELDS.filter((k) => JSON.stringify(b?.[k]) !== JSON.stringify(a[k]));
  if (secretTouched) changed.push('clientSecret');
  return changed;
}

function uniqueViolation(err: unknown): string | null {
  const e = err as { code?: string; constraint?: string };
  return e?.code === '23505' ? (e.constraint ?? '') : null;
}

/**
 * Saves a workspace's provider settings (docs/console.md#single-sign-on). The issuer must pass
 * the outbound URL rule, and while SSO is enabled its discovery document must load and name the
 * same issuer, so a typo is refused here and not at the next person's sign-in. Records an
 * `sso_update` audit event naming the changed settings.
 */
export async function saveSsoSettings(
  deps: SsoSettingsDeps,
  input: { workspaceId: string; settings: SsoSettingsInput; actor: Actor },
): Promise<SsoSettingsView> {
  const s = input.settings;
  const problems: FieldError[] = [];
  const urlProblem = outboundUrlProblem(s.issuer, deps.outbound);
  if (urlProblem) problems.push({ path: '/issuer', message: urlProblem });
  if (s.ssoRequired && !s.enabled)
    problems.push({ path: '/ssoRequired', message: 'needs single sign-on enabled' });
  if (s.autoJoin && s.emailDomains.length === 0)
    problems.push({ path: '/emailDomains', message: 'auto-join needs at least one email domain' });
  if (problems.length > 0) throw invalidRequest(problems);
  if (s.enabled) {
    try {
      await deps.oidc.discover(s.issuer);
    } catch (err) {
      throw invalidRequest([
        {
          path: '/issuer',
          message: isOidcUnreachable(err)
            ? 'the discovery document could not be fetched'
            : 'the discovery document is not valid for this issuer',
        },
      ]);
    }
  }
  try {
    return await withTransaction(deps.db, async (tx) => {
      const before = await findSso(tx, input.workspaceId);
      const sealed =
        s.clientSecret === undefined
          ? (before?.clientSecretSealed ?? null)
          : s.clientSecret === null
            ? null
            : sealSecret(deps.pepper, SSO_SECRET_PURPOSE, input.workspaceId, s.clientSecret);
      const row: SsoRow = {
        workspaceId: input.workspaceId,
        slug: s.slug,
        issuer: s.issuer,
        clientId: s.clientId,
        clientSecretSealed: sealed,
        enabled: s.enabled,
        ssoRequired: s.ssoRequired,
        autoJoin: s.autoJoin,
        defaultRole: s.defaultRole,
        groupsClaim: s.groupsClaim,
        groupRoles: s.groupRoles,
        emailDomains: [...new Set(s.emailDomains.map((d) => d.toLowerCase()))].sort(),
        updatedAt: deps.clock(),
      };
      await upsertSso(tx, row);
      // Password sessions of members end as SSO becomes required, not at their expiry
      // (docs/console.md#sso-and-sessions); the owners' stay, as their password does.
      const sessionsEnded =
        row.enabled && row.ssoRequired ? await deleteSessionsWithoutSso(tx, input.workspaceId) : 0;
      await insertAuditEvent(tx, {
        workspaceId: input.workspaceId,
        keyId: null,
        action: 'sso_update',
        ...input.actor,
        details: {
          changed: changedFields(before, row, s.clientSecret !== undefined),
          enabled: row.enabled,
          ssoRequired: row.ssoRequired,
          ...(sessionsEnded > 0 ? { sessionsEnded } : {}),
        },
        at: deps.clock(),
      });
      return settingsView(row, deps.redirectUri);
    });
  } catch (err) {
    const constraint = uniqueViolation(err);
    if (constraint === null) throw err;
    const what = constraint.startsWith('workspace_sso_domains')
      ? 'One of these email domains belongs to another workspace.'
      : 'Another workspace uses this slug; choose another.';
    throw new AppError('conflict', what);
  }
}
