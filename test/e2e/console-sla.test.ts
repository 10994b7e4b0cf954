import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import {
  expectStrictPageHeaders,
  hasChromium,
  screenshot,
  signedInConsole,
  SLOW,
  warnWithoutChromium,
  type SignedInConsole,
} from './support.js';

warnWithoutChromium('console-sla.test.ts');

/**
 * Settings > SLA (docs/cases.md#due-dates-and-sla) in real Chromium against the real service: an
 * owner reads the defaults, sets tighter days, is told what the API refused, and the page reads
 * at 390 px.
 */
describe.skipIf(!hasChromium)('console SLA settings in a real browser', () => {
  let session: SignedInConsole;
  let page: Page;

  beforeAll(async () => {
    session = await signedInConsole({ workspaceName: 'SLA E2E' });
    page = session.page;
  });

  afterAll(() => session?.close());

  it('shows the defaults, saves tighter days and keeps them across a reload', async () => {
    const res = await page.goto('/settings/sla');
    expectStrictPageHeaders(res);
    await expect.poll(() => page.locator('#days-CRITICAL').inputValue(), SLOW).toBe('7');
    expect(await page.locator('#days-INFO').inputValue()).toBe('');
    expect(await page.getByLabel('Longest risk acceptance (days)').inputValue()).toBe('365');
    await page.locator('#days-CRITICAL').fill('3');
    await page.locator('#exposed-CRITICAL').fill('1');
    await page.getByLabel('Longest risk acceptance (days)').fill('90');
    await page.getByRole('button', { name: 'Save SLA policy' }).click();
    await expect
      .poll(() => page.locator('#page-notice').textContent(), SLOW)
      .toBe('SLA policy saved; 0 due dates moved.');
    await page.reload();
    await expect.poll(() => page.locator('#days-CRITICAL').inputValue(), SLOW).toBe('3');
    expect(await page.locator('#exposed-CRITICAL').inputValue()).toBe('1');
    expect(await page.getByLabel('Longest risk acceptance (days)').inputValue()).toBe('90');
    await screenshot(page, 'console-sla');
    const api = await page.request.get('/api/console/sla-policy');
    expect(await api.json()).toMatchObject({
      days: { CRITICAL: 3 },
      exposedDays: { CRITICAL: 1 },
      maxAcceptanceDays: 90,
    });
  });

  it('says what the API refused and stores nothing', async () => {
    await page.locator('#days-HIGH').fill('0');
    await page.getByRole('button', { name: 'Save SLA policy' }).click();
    await expect
      .poll(() => page.locator('#page-error').textContent(), SLOW)
      .toContain('days HIGH: must be >= 1.');
    const api = await page.request.get('/api/console/sla-policy');
    expect(await api.json()).toMatchObject({ days: { HIGH: 30 } });
    expect(session.scriptProblems).toEqual([]);
  });

  it('reads at 390 px without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/settings/sla');
    await expect.poll(() => page.locator('#days-CRITICAL').inputValue(), SLOW).toBe('3');
    const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
  });
});
