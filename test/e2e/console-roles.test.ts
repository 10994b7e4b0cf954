import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import {
  E2E_PASSWORD,
  hasChromium,
  openBrowser,
  screenshot,
  signedInConsole,
  SLOW,
  warnWithoutChromium,
  type BrowserSession,
  type SignedInConsole,
} from './support.js';

warnWithoutChromium('console-roles.test.ts');

/**
 * The console shows a member only what their role may do (docs/console.md#members-and-roles), in
 * real Chromium at 1280 and 390 px: a viewer sees no upload, no case changes, no key, workflow or
 * plan buttons, no owner's data tools and no admin-only Settings tabs; the owner of the same
 * workspace sees them all. The API refuses these calls either way; this is what the pages offer.
 */
describe.skipIf(!hasChromium)('console controls by role in a real browser', () => {
  let owner: SignedInConsole;
  let viewer: BrowserSession;
  const stamp = Date.now();

  /** Each page and the controls on it that need more than a viewer. */
  const GATED: [string, string[]][] = [
    ['/scans', ['#upload-form']],
    ['/cases', ['#bulk-form', '#triage-form', '#bulk-owner-form']],
    [
      '/settings/api-keys',
      ['#keys-card', '#create-form', '[data-action="rotate"]', '[data-action="revoke"]'],
    ],
    ['/settings/workflows', ['#wf-form']],
    ['/settings/data', ['#retention-form button[type="submit"]', '#archive-link', '#delete-form']],
  ];
  const ADMIN_TABS = ['Audit log', 'Single sign-on', 'SLA'];

  async function visible(page: Page, selector: string): Promise<boolean> {
    const all = page.locator(selector);
    for (let i = 0; i < (await all.count()); i++) if (await all.nth(i).isVisible()) return true;
    return false;
  }

  /** Opens `path` and waits until the page knows the member's role. */
  async function open(page: Page, path: string): Promise<void> {
    await page.goto(path);
    await expect.poll(() => page.evaluate('document.body.dataset.role ?? null'), SLOW).not.toBeNull();
  }

  beforeAll(async () => {
    owner = await signedInConsole({ workspaceName: 'Roles E2E' });
    viewer = await openBrowser(owner.server.url);
    const csrf = owner.csrf;
    const invite = await owner.page.request.post('/api/console/invitations', {
      headers: { 'x-csrf-token': csrf },
      data: { email: `viewer-${stamp}@roles-e2e.test`, role: 'viewer' },
    });
    expect(invite.status()).toBe(201);
    const token = new URL(((await invite.json()) as { invitationUrl: string }).invitationUrl).pathname
      .split('/')
      .pop()!;
    const accepted = await viewer.page.request.post(`/api/console/invitations/${token}/accept`, {
      data: { password: E2E_PASSWORD },
    });
    expect(accepted.status()).toBe(201);
  });

  afterAll(async () => {
    await viewer?.browser.close();
    await owner?.close();
  });

  for (const width of [1280, 390]) {
    it(`shows a viewer no control it may not use, at ${width} px`, async () => {
      const page = viewer.page;
      await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
      for (const [path, selectors] of GATED) {
        await open(page, path);
        expect(await page.evaluate('document.body.dataset.role')).toBe('viewer');
        for (const selector of selectors)
          expect(await visible(page, selector), `${path} ${selector}`).toBe(false);
        // Nothing the page asks for on its own is refused: no alert once its calls are done.
        await page.waitForLoadState('networkidle');
        expect(await page.locator('#page-error').textContent(), path).toBe('');
      }
      // The export stays: reading cases is a viewer's.
      await open(page, '/cases');
      await page.locator('#bulk summary').click();
      expect(await visible(page, '#export-form')).toBe(true);
      await open(page, '/settings/api-keys');
      for (const tab of ADMIN_TABS)
        expect(
          await page.locator('.settings-nav').getByRole('link', { name: tab, exact: true }).isVisible(),
        ).toBe(false);
      expect(await page.locator('.settings-nav').getByRole('link', { name: 'Members' }).isVisible()).toBe(
        true,
      );
      expect(await visible(page, '[data-action="upgrade"], #downgrade-btn')).toBe(false);
      if (width === 390) await screenshot(page, 'console-viewer-phone');
      expect(viewer.scriptProblems).toEqual([]);
    });
  }

  it('shows the owner of the same workspace every one of them', async () => {
    const page = owner.page;
    for (const [path, selectors] of GATED) {
      await open(page, path);
      if (path === '/cases') await page.locator('#bulk summary').click();
      for (const selector of selectors) {
        // A row button needs a row of its state: the first key is active, so Rotate and Revoke show.
        await expect.poll(() => visible(page, selector), SLOW).toBe(true);
      }
    }
    await open(page, '/settings/api-keys');
    for (const tab of ADMIN_TABS)
      expect(
        await page.locator('.settings-nav').getByRole('link', { name: tab, exact: true }).isVisible(),
      ).toBe(true);
    expect(owner.scriptProblems).toEqual([]);
  });
});
