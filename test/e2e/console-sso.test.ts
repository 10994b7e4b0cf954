import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.js';
import {
  expectStrictPageHeaders,
  E2E_PASSWORD,
  hasChromium,
  openBrowser,
  screenshot,
  signedInConsole,
  SLOW,
  warnWithoutChromium,
  type SignedInConsole,
} from './support.js';

warnWithoutChromium('console-sso.test.ts');

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * Settings > Single sign-on and "Sign in with SSO" (docs/console.md#single-sign-on) in real
 * Chromium against the real service and a real OpenID provider on 127.0.0.1: an owner sets the
 * provider up, signs out, and comes back through the provider into the console; both pages at
 * 390 px.
 */
describe.skipIf(!hasChromium)('console single sign-on in a real browser', () => {
  let idp: TestOidcProvider;
  let session: SignedInConsole;
  let page: Page;
  let baseUrl: string;
  const email = `owner-${Date.now()}@sso-e2e.test`;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    idp = await startOidcProvider({ redirectUri: `${baseUrl}/api/console/sso/callback` });
    session = await signedInConsole({
      workspaceName: 'SSO E2E',
      email,
      server: { port, env: { PUBLIC_BASE_URL: baseUrl, SSO_ALLOW_LOOPBACK_HTTP: 'true' } },
    });
    page = session.page;
  });

  afterAll(async () => {
    await session?.close();
    await idp?.close();
  });

  it('an owner sets up the provider; the secret is never shown back', async () => {
    const res = await page.goto('/settings/single-sign-on');
    expectStrictPageHeaders(res);
    await expect
      .poll(() => page.locator('#redirect-uri').textContent(), SLOW)
      .toBe(`${baseUrl}/api/console/sso/callback`);
    await page.getByLabel('Workspace slug').fill('sso-e2e');
    await page.getByLabel('Issuer URL').fill(idp.issuer);
    await page.getByLabel('Client ID').fill(idp.clientId);
    await page.getByLabel('Client secret').fill(idp.clientSecret);
    await page.getByLabel('Email domains').fill('sso-e2e.test');
    await page.getByLabel('Enable single sign-on').check();
    await page.getByLabel('Group roles').fill('sec-admins = admin');
    await page.getByRole('button', { name: 'Save single sign-on' }).click();
    await expect.poll(() => page.locator('#page-notice').textContent(), SLOW).toBe('Single sign-on saved.');
    expect(await page.getByLabel('Client secret').inputValue()).toBe('');
    expect(await page.getByLabel('Client secret').getAttribute('placeholder')).toBe('A secret is stored');
    expect(await page.content()).not.toContain(idp.clientSecret);
    await screenshot(page, 'console-sso-settings');
  });

  it('says what is wrong with a bad issuer next to its field', async () => {
    await page.getByLabel('Issuer URL').fill('https://10.1.2.3');
    await page.getByRole('button', { name: 'Save single sign-on' }).click();
    await expect
      .poll(() => page.locator('#issuer-error').textContent(), SLOW)
      .toBe('Issuer URL must not point to a private, loopback or internal host.');
    await page.getByLabel('Issuer URL').fill(idp.issuer);
  });

  it('signs out, and back in through the provider with the workspace slug', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(/\/login/, SLOW);
    idp.signInAs('owner', { email, email_verified: true });
    await page.getByLabel('Work address or workspace slug').fill('no-such-co');
    await page.getByRole('button', { name: 'Continue with SSO' }).click();
    await expect
      .poll(() => page.locator('#sso-error').textContent(), SLOW)
      .toBe('No such workspace with single sign-on.');
    await page.getByLabel('Work address or workspace slug').fill('sso-e2e');
    await page.getByRole('button', { name: 'Continue with SSO' }).click();
    await page.waitForURL(`${baseUrl}/`, SLOW);
    await expect.poll(() => page.locator('#nav-workspace').textContent(), SLOW).toBe('SSO E2E');
    const me = await page.request.get('/api/console/session');
    expect(me.status()).toBe(200);
    expect(session.scriptProblems).toEqual([]);
  });

  it('signs in by email address too', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(/\/login/, SLOW);
    await page.getByLabel('Work address or workspace slug').fill(email);
    await page.getByRole('button', { name: 'Continue with SSO' }).click();
    await page.waitForURL(`${baseUrl}/`, SLOW);
  });

  it('both pages read at 390 px without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const url of ['/settings/single-sign-on', '/login']) {
      if (url === '/login') {
        await page.getByRole('button', { name: 'Log out' }).click();
        await page.waitForURL(/\/login/, SLOW);
      } else {
        await page.goto(url);
        await expect.poll(() => page.getByLabel('Workspace slug').inputValue(), SLOW).toBe('sso-e2e');
      }
      const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow, url).toBeLessThanOrEqual(0);
      await screenshot(page, `console-sso${url.replaceAll('/', '-')}-phone`);
    }
    expect(session.scriptProblems).toEqual([]);
  });
  it('refuses a member switching in with a password session, and links to the SSO sign-in', async () => {
    const owner = await page.request.post('/api/console/login', { data: { email, password: E2E_PASSWORD } });
    expect(owner.status()).toBe(200);
    const csrf = ((await owner.json()) as { csrfToken: string }).csrfToken;
    const patEmail = `pat-${Date.now()}@elsewhere.test`;
    const invite = await page.request.post('/api/console/invitations', {
      headers: { 'x-csrf-token': csrf },
      data: { email: patEmail, role: 'member' },
    });
    expect(invite.status()).toBe(201);
    const token = new URL(((await invite.json()) as { invitationUrl: string }).invitationUrl).pathname
      .split('/')
      .pop()!;
    const current = (await (await page.request.get('/api/console/sso')).json()) as Record<string, unknown>;
    const settings = Object.fromEntries(
      [
        'slug',
        'issuer',
        'clientId',
        'enabled',
        'emailDomains',
        'autoJoin',
        'defaultRole',
        'groupsClaim',
        'groupRoles',
      ].map((k) => [k, current[k]]),
    );
    const required = await page.request.put('/api/console/sso', {
      headers: { 'x-csrf-token': csrf },
      data: { ...settings, ssoRequired: true },
    });
    expect(required.status(), await required.text()).toBe(200);

    const pat = await openBrowser(session.server.url);
    try {
      const p = pat.page;
      const signup = await p.request.post('/api/console/signup', {
        data: { email: patEmail, password: E2E_PASSWORD, workspaceName: 'Pat Co', plan: 'free' },
      });
      expect(signup.status()).toBe(201);
      const accepted = await p.request.post(`/api/console/invitations/${token}/accept`, {
        headers: { 'x-csrf-token': ((await signup.json()) as { csrfToken: string }).csrfToken },
        data: {},
      });
      expect(accepted.status()).toBe(201);
      // A member's password sign-in opens the workspace that does not require SSO.
      const login = await p.request.post('/api/console/login', {
        data: { email: patEmail, password: E2E_PASSWORD },
      });
      expect(login.status()).toBe(200);
      await p.goto('/settings/members');
      await expect.poll(() => p.locator('#switch-workspace option').count(), SLOW).toBe(2);
      await p.locator('#switch-workspace').selectOption({ label: 'SSO E2E (member)' });
      await p.getByRole('button', { name: 'Switch' }).click();
      await expect
        .poll(() => p.locator('#page-error').textContent(), SLOW)
        .toContain('SSO E2E requires single sign-on: sign in with SSO (workspace "sso-e2e")');
      await p.locator('#page-error').getByRole('link', { name: 'Sign in with SSO' }).click();
      await p.waitForURL(/\/login\?sso=sso-e2e$/, SLOW);
      expect(await p.getByLabel('Work address or workspace slug').inputValue()).toBe('sso-e2e');
      expect(pat.scriptProblems).toEqual([]);
    } finally {
      await pat.browser.close();
    }
  });
});
