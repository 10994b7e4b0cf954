import * as oidc from 'openid-client';
import { outboundRequest, type OutboundRequest } from '../../../lib/outbound-request.js';

/**
 * The OpenID Connect relying party (docs/console.md#single-sign-on), over `openid-client`:
 * issuer discovery, the authorization URL (code flow, PKCE S256, state, nonce) and the code
 * exchange, where openid-client checks the `iss` of the response, the state, the ID token's
 * signature (the provider's JWKS), issuer, audience, expiry and nonce. Every request goes
 * through `lib/outbound-request.ts`, so an issuer URL an admin typed is held to the outbound
 * rule (https, no private or internal host, DNS pinned) like any customer-chosen URL.
 */

/** A provider as a workspace configured it; the secret already unsealed (null: a public client). */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string | null;
}

export interface OidcClientOptions {
  /** Admit `http://127.0.0.1` issuers (tests). @defaultValue false */
  allowLoopbackHttp?: boolean;
  /** Admit private-network issuers. @defaultValue false */
  allowPrivateHosts?: boolean;
  /** Budget of one request to the provider. @defaultValue 10_000 */
  timeoutMs?: number;
  /** How long a discovery document is reused. @defaultValue 600_000 */
  discoveryTtlMs?: number;
  /** The service's clock: ID token times are judged against it. */
  clock: () => Date;
}

/** The provider could not be reached (or answered too slowly): a 503 for the caller. */
export class OidcUnreachableError extends Error {
  constructor(readonly reason: string) {
    super(`identity provider unreachable: ${reason}`);
    this.name = 'OidcUnreachableError';
  }
}

/** The claims of a verified ID token. */
export type IdTokenClaims = oidc.IDToken;

function isUnreachable(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause) if (e instanceof OidcUnreachableError) return true;
  return false;
}

/** A short, secret-free reason for a refusal from openid-client (its code or error name). */
export function oidcFailureReason(err: unknown): string {
  // The provider's error codes are its text: only a plain token of it is repeated.
  const plain = (s: string) => s.replace(/[^A-Za-z0-9_.:-]/g, '').slice(0, 80);
  if (isUnreachable(err)) return 'unreachable';
  if (err instanceof oidc.AuthorizationResponseError) return plain(`provider_error:${err.error}`);
  if (err instanceof oidc.ResponseBodyError) return plain(`token_error:${err.error}`);
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? plain(code) : 'invalid_response';
}

export { isUnreachable as isOidcUnreachable };

const NULL_BODY = new Set([101, 204, 205, 304]);

export function createOidcClient(options: OidcClientOptions) {
  const discovered = new Map<string, { at: number; server: oidc.ServerMetadata }>();
  const ttl = options.discoveryTtlMs ?? 600_000;

  const fetchThroughRule: oidc.CustomFetch = async (url, init) => {
    const method = init.method.toUpperCase() as OutboundRequest['method'];
    const body =
      init.body === undefined || init.body === null
        ? undefined
        : init.body instanceof URLSearchParams
          ? init.body.toString()
          : typeof init.body === 'string'
            ? init.body
            : Buffer.from(init.body as ArrayBuffer).toString('utf8');
    const outcome = await outboundRequest(
      { method, url, headers: { ...init.headers }, ...(body === undefined ? {} : { body }) },
      {
        allowLoopbackHttp: options.allowLoopbackHttp ?? false,
        // An admitted `http://127.0.0.1` issuer is a loopback address by definition.
        allowPrivateHosts: (options.allowPrivateHosts ?? false) || insecure(url),
        timeoutMs: options.timeoutMs ?? 10_000,
        maxResponseBytes: 1_048_576,
      },
    );
    if (!outcome.ok) throw new OidcUnreachableError(outcome.reason);
    const headers = new Headers();
    for (const [k, v] of Object.entries(outcome.headers)) {
      if (typeof v === 'string') headers.set(k, v);
      else if (Array.isArray(v)) for (const one of v) headers.append(k, one);
    }
    return new Response(NULL_BODY.has(outcome.status) ? null : outcome.body, {
      status: outcome.status,
      headers,
    });
  };

  /** An `http://127.0.0.1` URL while those are admitted (tests). */
  function insecure(url: string): boolean {
    return options.allowLoopbackHttp === true && url.startsWith('http://127.0.0.1');
  }

  /** The provider's metadata, discovered at most once per `discoveryTtlMs`. */
  async function serverOf(issuer: string): Promise<oidc.ServerMetadata> {
    const hit = discovered.get(issuer);
    const now = Date.now();
    if (hit && now - hit.at < ttl) return hit.server;
    const found = await oidc.discovery(new URL(issuer), 'discovery', undefined, undefined, {
      [oidc.customFetch]: fetchThroughRule,
      ...(insecure(issuer) ? { execute: [oidc.allowInsecureRequests] } : {}),
    });
    const server = { ...found.serverMetadata() } as oidc.ServerMetadata;
    discovered.set(issuer, { at: now, server });
    return server;
  }

  /** A configuration for one call, with the clock as it is now. */
  async function configure(settings: OidcSettings): Promise<oidc.Configuration> {
    const server = await serverOf(settings.issuer);
    const skew = Math.round((options.clock().getTime() - Date.now()) / 1000);
    const metadata: Partial<oidc.ClientMetadata> = { [oidc.clockSkew]: skew };
    if (settings.clientSecret !== null) metadata.client_secret = settings.clientSecret;
    const config = new oidc.Configuration(
      server,
      settings.clientId,
      metadata,
      settings.clientSecret === null ? oidc.None() : oidc.ClientSecretPost(settings.clientSecret),
    );
    config[oidc.customFetch] = fetchThroughRule;
    config.timeout = Math.ceil((options.timeoutMs ?? 10_000) / 1000);
    if (insecure(settings.issuer)) oidc.allowInsecureRequests(config);
    return config;
  }

  return {
    /** Fetches the discovery document now (settings are checked with it before they are saved). */
    async discover(issuer: string): Promise<void> {
      discovered.delete(issuer);
      await serverOf(issuer);
    },

    /** Where to send the browser, with a fresh PKCE challenge of `codeVerifier`. */
    async authorizationUrl(
      settings: OidcSettings,
      input: { redirectUri: string; state: string; nonce: string; codeVerifier: string; scope: string },
    ): Promise<string> {
      const config = await configure(settings);
      return oidc
        .buildAuthorizationUrl(config, {
          redirect_uri: input.redirectUri,
          scope: input.scope,
          state: input.state,
          nonce: input.nonce,
          code_challenge: await oidc.calculatePKCECodeChallenge(input.codeVerifier),
          code_challenge_method: 'S256',
        })
        .toString();
    },

    /** Exchanges the code of the callback URL; the verified ID token's claims, or a throw. */
    async exchange(
      settings: OidcSettings,
      input: { callbackUrl: URL; redirectUri: string; state: string; nonce: string; codeVerifier: string },
    ): Promise<IdTokenClaims> {
      const config = await configure(settings);
      const tokens = await oidc.authorizationCodeGrant(
        config,
        input.callbackUrl,
        {
          pkceCodeVerifier: input.codeVerifier,
          expectedState: input.state,
          expectedNonce: input.nonce,
          idTokenExpected: true,
        },
        { redirect_uri: input.redirectUri },
      );
      const claims = tokens.claims();
      if (!claims) throw new Error('no ID token');
      return claims;
    },
  };
}

export type OidcClient = ReturnType<typeof createOidcClient>;
