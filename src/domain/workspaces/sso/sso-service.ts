import type { Db } from '../../../db/pool.js';
import type { Actor } from '../../keys/key-service.js';
import { createOidcClient, type OidcClient } from './oidc-client.js';
import {
  saveSsoSettings,
  settingsView,
  type SsoSettingsInput,
  type SsoSettingsView,
} from './sso-settings.js';
import { finishSsoSignIn, startSsoSignIn, type RequestMeta } from './sso-sign-in.js';
import { findSso, passwordWorkspace } from './sso-store.js';

export interface SsoServiceDeps {
  db: Db;
  pepper: string;
  clock: () => Date;
  /** The service's public base URL: the callback is `<base>/api/console/sso/callback`. */
  publicBaseUrl: string;
  /** Admit `http://127.0.0.1` issuers (tests). @defaultValue false */
  allowLoopbackHttp?: boolean;
  /** Admit issuers on private networks. @defaultValue false */
  allowPrivateHosts?: boolean;
  /** An OpenID client of the caller's (tests); by default one over the options above. */
  oidc?: OidcClient;
}

/** The path of the callback, under the console API. */
export const SSO_CALLBACK_PATH = '/api/console/sso/callback';

/**
 * Single sign-on with OpenID Connect per workspace (docs/console.md#single-sign-on): its
 * settings, the sign-in from start to callback, and the "SSO required" rule password sign-in
 * asks about.
 */
export function createSsoService(deps: SsoServiceDeps) {
  const outbound = {
    allowLoopbackHttp: deps.allowLoopbackHttp ?? false,
    allowPrivateHosts: deps.allowPrivateHosts ?? false,
  };
  const oidc = deps.oidc ?? createOidcClient({ ...outbound, clock: deps.clock });
  const redirectUri = `${deps.publicBaseUrl}${SSO_CALLBACK_PATH}`;
  const shared = { db: deps.db, pepper: deps.pepper, clock: deps.clock, oidc, redirectUri };

  return {
    redirectUri,

    /** The workspace's settings (never the client secret). */
    async settings(workspaceId: string): Promise<SsoSettingsView> {
      return settingsView(await findSso(deps.db, workspaceId), redirectUri);
    },

    async saveSettings(
      workspaceId: string,
      settings: SsoSettingsInput,
      actor: Actor,
    ): Promise<SsoSettingsView> {
      return saveSsoSettings({ ...shared, outbound }, { workspaceId, settings, actor });
    },

    start(by: { slug: string } | { email: string }) {
      return startSsoSignIn(shared, by);
    },

    finish(input: { callbackUrl: URL; state: string; browserSecret: string | null; meta: RequestMeta }) {
      return finishSsoSignIn(shared, input);
    },

    /** The workspace (and role) a password sign-in of this user opens; null: SSO is required everywhere. */
    passwordWorkspace(userId: string) {
      return passwordWorkspace(deps.db, userId);
    },
  };
}

export type SsoService = ReturnType<typeof createSsoService>;
