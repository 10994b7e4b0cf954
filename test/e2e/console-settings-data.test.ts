import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import {
  WORKSPACE_DELETION_QUEUE,
  workspaceDeletionProcessor,
  type WorkspaceDeletionPayload,
} from '../../src/jobs/workspace-deletion.js';
import {
  expectStrictPageHeaders,
  hasChromium,
  screenshot,
  signedInConsole,
  SLOW,
  warnWithoutChromium,
  type SignedInConsole,
} from './support.js';

warnWithoutChromium('console-settings-data.test.ts');

/**
 * Settings > Data (docs/console.md#data-retention-archive-and-deletion) in real Chromium against
 * the real service: an owner sets the scan file retention, downloads the archive, is refused a
 * deletion with a mistyped name, deletes the workspace with its name and sees the removal finish;
 * the page at 390 px too.
 */
describe.skipIf(!hasChromium)('console Settings > Data in a real browser', () => {
  let session: SignedInConsole;
  let page: Page;
  let worker: { close(): Promise<void> } | undefined;

  beforeAll(async () => {
    session = await signedInConsole({ workspaceName: 'Data E2E' });
    page = session.page;
  });

  afterAll(async () => {
    await worker?.close();
    await session?.close();
  });

  it('an owner sets the retention and downloads the archive', async () => {
    const res = await page.goto('/settings/data');
    expectStrictPageHeaders(res);
    await expect.poll(() => page.locator('#retention-form').getAttribute('aria-busy'), SLOW).toBeNull();
    expect(await page.getByLabel('Keep raw scan files for (days)').inputValue()).toBe('');
    await page.getByLabel('Keep raw scan files for (days)').fill('30');
    await page.getByRole('button', { name: 'Save retention' }).click();
    await expect.poll(() => page.locator('#page-notice').textContent(), SLOW).toBe('Retention saved.');
    await page.reload();
    await expect.poll(() => page.getByLabel('Keep raw scan files for (days)').inputValue(), SLOW).toBe('30');
    const href = await page.locator('#archive-link').getAttribute('href');
    expect(href).toBe('/api/console/workspace/archive');
    const archive = await page.request.get(href!);
    expect(archive.status()).toBe(200);
    expect(archive.headers()['content-type']).toBe('application/gzip');
    await screenshot(page, 'console-settings-data');
  });

  it('reads at 390 px without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/settings/data');
    await expect.poll(() => page.locator('#retention-form').getAttribute('aria-busy'), SLOW).toBeNull();
    const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, 'console-settings-data-phone');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('refuses a mistyped name, then deletes the workspace and shows when the removal finished', async () => {
    await page.goto('/settings/data');
    await page.getByLabel("Type the workspace's name to confirm").fill('Data E2');
    await page.getByRole('button', { name: 'Delete workspace' }).click();
    await expect
      .poll(() => page.locator('#page-error').textContent(), SLOW)
      .toContain("not the workspace's name");
    await page.getByLabel("Type the workspace's name to confirm").fill('Data E2E');
    await page.getByRole('button', { name: 'Delete workspace' }).click();
    await expect
      .poll(() => page.locator('#delete-status').textContent(), SLOW)
      .toContain('Deletion requested');
    worker = session.server.infra.queues.worker<WorkspaceDeletionPayload, unknown>(
      WORKSPACE_DELETION_QUEUE,
      workspaceDeletionProcessor(session.server.deps.workspaceDeletions),
    );
    await expect
      .poll(() => page.locator('#delete-status').textContent(), { timeout: 30_000, interval: 200 })
      .toContain('were removed at');
    // The session ended with the workspace.
    expect((await page.request.get('/api/console/session')).status()).toBe(401);
    expect(session.scriptProblems).toEqual([]);
  }, 60_000);
});
