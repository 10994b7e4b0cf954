import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';
import {
  warnWithoutChromium,
  cookieHeader,
  hasChromium,
  KEY_SHAPE,
  openBrowser,
  SLOW,
  withoutRequestId,
  type BrowserSession,
} from './support.js';

warnWithoutChromium('console-security.test.ts', 'the console security browser tests');

const MARKUP_NAME = `<img src=x onerror="window.__pwned=1"> & "Co" <script>window.__pwned=2</script>`;
const CSRF_FAILED = {
  type: 'https://docs.vulntriage.dev/errors/csrf_failed',
  title: 'CSRF check failed',
  status: 403,
  code: 'csrf_failed',
  detail: 'The X-CSRF-Token header is missing or does not match this session.',
};

/**
 * Security cases of the console pages in real Chromium (docs/console.md#sessions-and-security): CSRF, the strict
 * CSP and no-store headers, escaping, the secret kept off every page but the reveal page,
 * and sign-in redirects that only lead to our own pages.
 */
describe.skipIf(!hasChromium)('console pages: security', () => {
  let server: TestServer;
  let session: BrowserSession;
  const email = `sec-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'correct horse battery staple';
  let revealUrl = '';

  beforeAll(async () => {
    server = await startTestServer();
    session = await openBrowser(server.url);
    // Signed up through the API (the journey suite covers the form), then signed in in the browser.
    const res = await fetch(`${server.url}/api/console/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password, workspaceName: MARKUP_NAME, plan: 'free' }),
    });
    expect(res.status).toBe(201);
    revealUrl = ((await res.json()) as { revealUrl: string }).revealUrl;
    const token = /svc_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1] ?? '';
    await session.context.addCookies([
      { name: 'svc_session', value: token, url: server.url, httpOnly: true, sameSite: 'Strict' },
    ]);
  });

  afterAll(async () => {
    await session?.browser.close();
    await server?.close();
  });

  it('writes the full key only on the reveal page, and never to browser storage', async () => {
    const { page } = session;
    await page.goto(revealUrl);
    await expect.poll(() => page.locator('#reveal-key').textContent(), SLOW).toMatch(KEY_SHAPE);
    const key = (await page.locator('#reveal-key').textContent()) ?? '';
    expect(await page.evaluate('[localStorage.length, sessionStorage.length]')).toEqual([0, 0]);

    await page.goto('/settings/api-keys');
    await expect.poll(() => page.locator('#keys-body tr').count(), SLOW).toBe(1);
    const masked = `${key.slice(0, 8)}${'*'.repeat(16)}${key.slice(-4)}`;
    expect(await page.locator('#keys-body code.masked').textContent()).toBe(masked);
    const html = await page.content();
    expect(html).not.toContain(key);
    expect(html).not.toMatch(/svc_[0-9A-Za-z]{38}/);
    expect(await page.evaluate('[localStorage.length, sessionStorage.length]')).toEqual([0, 0]);
  });

  it('shows a workspace name with markup as text', async () => {
    const { page } = session;
    await expect.poll(() => page.locator('#ws-name').textContent(), SLOW).toBe(MARKUP_NAME);
    expect(await page.locator('#nav-workspace').textContent()).toBe(MARKUP_NAME);
    expect(await page.locator('#ws-name img, #ws-name script').count()).toBe(0);
    expect(await page.evaluate('window.__pwned === undefined')).toBe(true);
  });

  it('refuses a state-changing call without the X-CSRF-Token header with 403 csrf_failed', async () => {
    const fromPage = (await session.page.evaluate(`(async () => {
      const res = await fetch('/api/console/keys', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ label: 'no csrf', scopes: ['usage:read'] }),
      });
      return { status: res.status, body: await res.json() };
    })()`)) as { status: number; body: unknown };
    expect(fromPage.status).toBe(403);
    expect(withoutRequestId(fromPage.body)).toEqual(CSRF_FAILED);

    const cookie = await cookieHeader(session.context);
    for (const csrf of [undefined, 'not-the-token']) {
      const res = await fetch(`${server.url}/api/console/plan`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', ...(csrf ? { 'x-csrf-token': csrf } : {}) },
        body: JSON.stringify({ plan: 'service' }),
      });
      expect(res.status).toBe(403);
      expect(withoutRequestId(await res.json())).toEqual(CSRF_FAILED);
    }
    const keys = await fetch(`${server.url}/api/console/keys`, { headers: { cookie } });
    expect(((await keys.json()) as { data: unknown[] }).data).toHaveLength(1);
  });

  it('serves every page with the strict CSP and no-store, and leaves the JSON API headers alone', async () => {
    const cookie = await cookieHeader(session.context);
    for (const path of ['/signup', '/login', '/settings/api-keys', `/reveal/${'A'.repeat(43)}`]) {
      const res = await fetch(`${server.url}${path}`, { headers: { cookie }, redirect: 'manual' });
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("default-src 'self'");
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).not.toContain('unsafe-inline');
      expect(res.headers.get('cache-control'), path).toBe('no-store');
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
    }
    const api = await fetch(`${server.url}/api/console/session`, { headers: { cookie } });
    expect(api.status).toBe(200);
    expect(api.headers.get('content-security-policy')).toBeNull();
    const script = await fetch(`${server.url}/assets/settings.js`);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(script.headers.get('content-security-policy')).toContain("script-src 'self'");
  });

  it('has the browser enforce the policy: an injected inline script does not run', async () => {
    const seen = session.scriptProblems.length;
    const ran = await session.page.evaluate(`(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__inlineRan = true';
      document.body.append(s);
      return window.__inlineRan === true;
    })()`);
    expect(ran).toBe(false);
    await expect
      .poll(() => session.scriptProblems.slice(seen).join('\n'), SLOW)
      .toMatch(/Content Security Policy/);
    session.scriptProblems.splice(seen);
  });

  it('sends signed-out visitors to sign-in, and afterwards only to our own pages', async () => {
    const token = 'B'.repeat(43);
    const expectations: [string, string][] = [
      ['/', '/signup'],
      ['/settings/api-keys', '/login?next=/settings/api-keys'],
      [`/reveal/${token}`, `/login?next=/reveal/${token}`],
    ];
    for (const [from, to] of expectations) {
      const res = await fetch(`${server.url}${from}`, { redirect: 'manual' });
      expect(res.status, from).toBe(303);
      expect(res.headers.get('location'), from).toBe(to);
    }

    const { page, context } = session;
    await context.clearCookies();
    await page.goto('/login?next=//evil.example/steal');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/settings/api-keys');
    expect(new URL(page.url()).origin).toBe(server.url);
  });

  it('saw no script error and no CSP violation besides the injected script', () => {
    expect(session.scriptProblems).toEqual([]);
  });
});
