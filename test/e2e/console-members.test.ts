import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';
import {
  expectStrictPageHeaders,
  hasChromium,
  openBrowser,
  screenshot,
  SLOW,
  warnWithoutChromium,
  type BrowserSession,
} from './support.js';

warnWithoutChromium('console-members.test.ts');

/**
 * Settings > Members, an invitation's page, the workspace switcher and the password reset pages
 * (docs/console.md#invitations, docs/console.md#password-reset) in real Chromium against the real
 * service, at 1280 and 390 px. The tests run in order: the owner invites, a new person accepts in a
 * second browser, the owner changes their role and removes them, and a reset link sets a password.
 */
describe.skipIf(!hasChromium)('console members in a real browser', () => {
  let server: TestServer;
  let owner: BrowserSession;
  let guest: BrowserSession;
  let page: Page;
  let invitationUrl = '';
  const ownerEmail = `owner-${randomBytes(4).toString('hex')}@example.com`;
  const guestEmail = `guest-${randomBytes(4).toString('hex')}@example.com`;

  beforeAll(async () => {
    server = await startTestServer();
    owner = await openBrowser(server.url);
    guest = await openBrowser(server.url);
    page = owner.page;
  });

  afterAll(async () => {
    await owner?.browser.close();
    await guest?.browser.close();
    await server?.close();
  });

  it('invites from Settings > Members and shows the link once', async () => {
    await page.goto('/signup');
    await page.getByLabel('Work email').fill(ownerEmail);
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery staple');
    await page.getByLabel('Workspace name').fill('Members <b>Co</b>');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.waitForURL(/\/reveal\//);
    const res = await page.goto('/settings/members');
    expectStrictPageHeaders(res);
    await expect.poll(() => page.locator('#members-body tr').count(), SLOW).toBe(1);
    await page.getByLabel('Email', { exact: true }).fill(guestEmail);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Invite' }).click();
    await expect
      .poll(() => page.locator('#invite-url').textContent(), SLOW)
      .toMatch(/\/invitations\/[A-Za-z0-9_-]{40,}$/);
    invitationUrl = (await page.locator('#invite-url').textContent())!;
    await expect.poll(() => page.locator('#invitations-body tr').count(), SLOW).toBe(1);
    await screenshot(page, 'console-members');
  });

  it('lets the invited person accept on a phone-sized screen and land in the workspace', async () => {
    const p = guest.page;
    await p.setViewportSize({ width: 390, height: 844 });
    const res = await p.goto(new URL(invitationUrl).pathname);
    expectStrictPageHeaders(res);
    await expect.poll(() => p.locator('#invite-summary').textContent(), SLOW).toContain('Members <b>Co</b>');
    expect(await p.locator('#invite-summary b').count()).toBe(0);
    await screenshot(p, 'console-invitation-phone');
    await p.setViewportSize({ width: 1280, height: 800 });
    await screenshot(p, 'console-invitation');
    await p.setViewportSize({ width: 390, height: 844 });
    await p.getByLabel('Password').fill('the guest chose this');
    await p.getByRole('button', { name: 'Accept the invitation' }).click();
    await p.waitForURL((u) => u.pathname === '/');
    const me = await p.evaluate("fetch('/api/console/session').then((r) => r.json())");
    expect(me).toMatchObject({ role: 'viewer' });
    // A second acceptance is refused in words.
    await p.goto(new URL(invitationUrl).pathname);
    await expect.poll(() => p.locator('#form-error').textContent(), SLOW).toMatch(/already used/);
    expect(guest.scriptProblems).toEqual([]);
  });

  it('changes the role and removes the member; their open page loses its session', async () => {
    await page.goto('/settings/members');
    await expect.poll(() => page.locator('#members-body tr').count(), SLOW).toBe(2);
    await page.getByLabel(`Role of ${guestEmail}`).selectOption('member');
    await expect.poll(() => page.locator('#page-notice').textContent(), SLOW).toContain('is now member');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'console-members-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page
      .locator('#members-body tr', { hasText: guestEmail })
      .getByRole('button', { name: 'Remove' })
      .click();
    await expect.poll(() => page.locator('#members-body tr').count(), SLOW).toBe(1);
    const status = await guest.page.evaluate("fetch('/api/console/session').then((r) => r.status)");
    expect(status).toBe(401);
    expect(owner.scriptProblems).toEqual([]);
  });

  it('asks for a reset link with the same words for any address, and a reset link sets a password', async () => {
    const p = guest.page;
    await p.goto('/login');
    await p.getByRole('link', { name: 'Forgot your password?' }).click();
    await p.getByLabel('Email').fill('nobody-at-all@example.com');
    await p.getByRole('button', { name: 'Email me a link' }).click();
    await expect
      .poll(
        async () => [await p.locator('#form-done').isVisible(), await p.locator('#form-error').textContent()],
        SLOW,
      )
      .toEqual([true, '']);
    await screenshot(p, 'console-forgot-password-phone');
    const res = await p.goto(`/reset-password/${'A'.repeat(43)}`);
    expectStrictPageHeaders(res);
    await p.getByLabel('New password', { exact: true }).fill('a long new passphrase');
    await p.getByRole('button', { name: 'Set the password' }).click();
    await expect.poll(() => p.locator('#form-error').textContent(), SLOW).toMatch(/older than 30 minutes/);
    await screenshot(p, 'console-reset-password-phone');
    expect(guest.scriptProblems).toEqual([]);
  });
});
