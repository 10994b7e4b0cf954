import type { FastifyInstance } from 'fastify';
import type { TestApp } from './test-app.js';

/** The public base URL the SSO tests give the app: the provider redirects to its callback. */
export const SSO_BASE_URL = 'http://127.0.0.1:39917';
export const SSO_REDIRECT_URI = `${SSO_BASE_URL}/api/console/sso/callback`;
export const SSO_ENV = { SSO_ALLOW_LOOPBACK_HTTP: 'true', PUBLIC_BASE_URL: SSO_BASE_URL };

/** `Set-Cookie` pairs of an answer, by name. */
function cookiesOf(setCookie: string[] | string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of [setCookie ?? []].flat()) {
    const pair = c.split(';')[0]!;
    const at = pair.indexOf('=');
    out.set(pair.slice(0, at), pair.slice(at + 1));
  }
  return out;
}

/** Starts a sign-in through the app: the provider's URL and the browser-binding cookie. */
export async function startSso(
  app: FastifyInstance,
  by: { workspace: string } | { email: string },
): Promise<{ authorizationUrl: string; browserCookie: string }> {
  const res = await app.inject({ method: 'POST', url: '/api/console/sso/start', payload: by });
  if (res.statusCode !== 200) throw new Error(`sso start failed: ${res.statusCode} ${res.body}`);
  const browser = cookiesOf(res.headers['set-cookie']).get('svc_sso');
  if (!browser) throw new Error('no svc_sso cookie');
  return {
    authorizationUrl: (res.json() as { authorizationUrl: string }).authorizationUrl,
    browserCookie: `svc_sso=${browser}`,
  };
}

/**
 * What a browser does at the provider: follows its redirects (with its cookies) until it is
 * sent back to the app's callback, whose URL (code, state, iss) is returned unvisited.
 */
export async function atProvider(authorizationUrl: string): Promise<URL> {
  const jar = new Map<string, string>();
  let url = authorizationUrl;
  for (let hop = 0; hop < 12; hop++) {
    const res = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const [k, v] of cookiesOf(res.headers.getSetCookie())) jar.set(k, v);
    const location = res.headers.get('location');
    if (!location) throw new Error(`provider stopped at ${url}: ${res.status} ${await res.text()}`);
    const next = new URL(location, url);
    if (next.href.startsWith(SSO_REDIRECT_URI)) return next;
    url = next.href;
  }
  throw new Error('too many redirects at the provider');
}

/** Calls the app's callback as the browser would (its path and query, with the binding cookie). */
export function callback(t: TestApp, back: URL, browserCookie: string | null) {
  return t.app.inject({
    method: 'GET',
    url: `${back.pathname}${back.search}`,
    headers: browserCookie ? { cookie: browserCookie } : {},
  });
}

/** The session cookie an answer set (`svc_session=…`), or null. */
export function sessionCookieOf(res: { headers: Record<string, unknown> }): string | null {
  const value = cookiesOf(res.headers['set-cookie'] as string[] | undefined).get('svc_session');
  return value ? `svc_session=${value}` : null;
}
