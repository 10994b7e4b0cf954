import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import { Provider } from 'oidc-provider';

/**
 * A real OpenID provider (the `oidc-provider` package) on 127.0.0.1 with its own signing key,
 * for the single sign-on tests. Its login and consent step has no form: whoever reaches
 * `/interaction/:uid` is signed in as the account `signInAs` last chose, so a test (or a
 * browser) only follows redirects.
 */
export interface TestAccount {
  email: string;
  email_verified: boolean;
  groups?: string[];
  name?: string;
}

export interface TestOidcProvider {
  /** The provider's issuer identifier, `http://127.0.0.1:<port>`. */
  issuer: string;
  /** The same provider by another name (`http://localhost:<port>`): a discovery that names another issuer. */
  otherName: string;
  clientId: string;
  clientSecret: string;
  /** Adds or replaces an account and signs the next interaction in as it. */
  signInAs(sub: string, account: TestAccount): void;
  /** Every request the provider received (method and path), for the "which calls" checks. */
  requests: string[];
  close(): Promise<void>;
}

export async function startOidcProvider(options: {
  redirectUri: string;
  /** ID token lifetime in seconds. @defaultValue 60 */
  idTokenTtl?: number;
}): Promise<TestOidcProvider> {
  const accounts = new Map<string, TestAccount>();
  let current = '';
  const requests: string[] = [];
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = 'vuln-triage-test';
  const clientSecret = 'provider-client-secret-'.padEnd(48, 'z');
  const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [{ ...jwk, kid: 'test-key', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: ['oidc-test-cookie-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
    // Scope claims go in the ID token itself, as the groups claim does at Okta, Entra or Keycloak.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    ttl: { IdToken: options.idTokenTtl ?? 60 },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, sub) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: async () => ({ sub, ...account }) };
    },
  });
  const callback = provider.callback();

  server.on('request', (req, res) => {
    requests.push(`${req.method} ${(req.url ?? '').split('?')[0]}`);
    if (!req.url?.startsWith('/interaction/')) return void callback(req, res);
    void (async () => {
      try {
        const details = await provider.interactionDetails(req, res);
        const clientOf = String(details.params.client_id);
        const grant = new provider.Grant({ accountId: current, clientId: clientOf });
        grant.addOIDCScope(String(details.params.scope));
        const grantId = await grant.save();
        await provider.interactionFinished(
          req,
          res,
          { login: { accountId: current }, consent: { grantId } },
          { mergeWithLastSubmission: false },
        );
      } catch (err) {
        res.statusCode = 500;
        res.end(String(err));
      }
    })();
  });

  return {
    issuer,
    otherName: `http://localhost:${port}`,
    clientId,
    clientSecret,
    requests,
    signInAs(sub, account) {
      accounts.set(sub, account);
      current = sub;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
