import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';
import {
  warnWithoutChromium,
  expectStrictPageHeaders,
  hasChromium,
  KEY_SHAPE,
  openBrowser,
  screenshot,
  SLOW,
  type BrowserSession,
} from './support.js';

warnWithoutChromium('console-audit.test.ts');

/** A label that would run script if any page wrote it as markup. */
const XSS_LABEL = '<img src=x onerror="window.__xss=1">"><script>window.__xss=2</script>';

/**
 * Settings > Audit log and the Settings > API keys details of docs/console.md#audit-log, in real
 * Chromium against the real service: the audit page lists who did what from where, filters and
 * pages through the URL, never shows another workspace's events and writes labels as text;
 * the keys table links a rotated key to its successor and can hide ended keys; a trial goes
 * back to Free and the change is in the audit log. The tests run in order on one session.
 */
describe.skipIf(!hasChromium)('console audit log and settings details in a real browser', () => {
  let server: TestServer;
  let session: BrowserSession;
  let page: Page;
  const ids = { xss: '', successor: '', otherKey: '', userId: '' };

  beforeAll(async () => {
    server = await startTestServer();
    session = await openBrowser(server.url);
    page = session.page;
  });

  afterAll(async () => {
    await session?.browser.close();
    await server?.close();
  });

  async function revealed(): Promise<void> {
    await page.waitForURL(/\/reveal\/[A-Za-z0-9_-]+$/);
    await expect.poll(() => page.locator('#reveal-key').textContent(), SLOW).toMatch(KEY_SHAPE);
  }

  async function openSettings(query = ''): Promise<void> {
    await page.goto(`/settings/api-keys${query}`);
    await expect.poll(() => page.locator('#keys-body tr').count(), SLOW).toBeGreaterThan(0);
    await expect.poll(() => page.locator('#workspace-card').getAttribute('aria-busy'), SLOW).toBe('false');
  }

  async function openAudit(query = ''): Promise<void> {
    const res = await page.goto(`/settings/audit-log${query}`);
    expectStrictPageHeaders(res);
    await auditLoaded();
  }

  async function auditLoaded(): Promise<void> {
    await expect.poll(() => page.locator('#audit-card').getAttribute('aria-busy'), SLOW).toBe('false');
  }

  const auditRows = () => page.locator('#audit-body tr');
  const actions = () => auditRows().evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')));
  const eventIds = () => auditRows().evaluateAll((rows) => rows.map((r) => r.getAttribute('data-event-id')));

  /** The keys as the console's JSON API lists them, fetched in the page (its session cookie). */
  async function consoleKeys(): Promise<{ id: string; label: string; successorId: string | null }[]> {
    return (await page.evaluate("fetch('/api/console/keys').then((r) => r.json()).then((b) => b.data)")) as {
      id: string;
      label: string;
      successorId: string | null;
    }[];
  }

  it('sets up: a trial workspace, a key with a hostile label, rotated, its successor revoked', async () => {
    await page.goto('/signup');
    await page.getByLabel('Work email').fill(`audit-${randomBytes(4).toString('hex')}@example.com`);
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery staple');
    await page.getByLabel('Workspace name').fill('Audit Co');
    await page.getByRole('radio', { name: /14-day trial/ }).check();
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await revealed();
    ids.userId = String(
      await page.evaluate("fetch('/api/console/session').then((r) => r.json()).then((b) => b.userId)"),
    );

    await openSettings();
    await page.getByLabel('Label', { exact: true }).fill(XSS_LABEL);
    await page.getByRole('button', { name: 'Create key' }).last().click();
    await revealed();
    ids.xss = (await consoleKeys()).find((k) => k.label === XSS_LABEL)!.id;

    await openSettings();
    await page.locator(`#keys-body tr[data-key-id="${ids.xss}"] button[data-action="rotate"]`).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate key' }).click();
    await revealed();
    ids.successor = (await consoleKeys()).find((k) => k.id === ids.xss)!.successorId!;
    expect(ids.successor).toMatch(/^[0-9a-f-]{36}$/);

    await openSettings();
    await page.locator(`#keys-body tr[data-key-id="${ids.successor}"] button[data-action="revoke"]`).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await expect
      .poll(() => page.locator(`#keys-body tr[data-key-id="${ids.successor}"] .status`).textContent(), SLOW)
      .toBe('Revoked');
  });

  it('links a rotated key to its successor, counts only active keys as active, and writes the label as text', async () => {
    await openSettings();
    const old = page.locator(`#keys-body tr[data-key-id="${ids.xss}"]`);
    const successor = page.locator(`#keys-body tr[data-key-id="${ids.successor}"]`);
    const successorMask = await successor.locator('code.masked').first().textContent();
    const oldMask = await old.locator('code.masked').first().textContent();
    expect(await old.locator('.lineage-to').textContent()).toBe(`rotated to ${successorMask}`);
    expect(await old.locator('.lineage-to a').getAttribute('href')).toBe(`#key-${ids.successor}`);
    expect(await successor.locator('.lineage-from').textContent()).toBe(`successor of ${oldMask}`);
    expect(await old.locator('.key-name').textContent()).toBe(XSS_LABEL);
    // The first key is active, the rotated one is in its grace, the successor is revoked.
    expect(await page.locator('#ws-active-keys').textContent()).toBe('1');
    expect(await page.locator('#ws-rotating-keys').textContent()).toBe('1 rotating');
    expect(await page.locator('.crumbs a').getAttribute('href')).toBe('/settings');
  });

  it('hides revoked and expired keys with a keyboard toggle kept in the URL', async () => {
    const successor = page.locator(`#keys-body tr[data-key-id="${ids.successor}"]`);
    const toggle = page.getByRole('checkbox', { name: 'Hide revoked and expired' });
    expect(await toggle.isChecked()).toBe(false);
    expect(await successor.isVisible()).toBe(true);
    await toggle.focus();
    await page.keyboard.press('Space');
    expect(await successor.isVisible()).toBe(false);
    expect(await page.locator(`#keys-body tr[data-key-id="${ids.xss}"]`).isVisible()).toBe(true);
    expect(new URL(page.url()).searchParams.get('hide')).toBe('ended');
    expect(await page.locator('#keys-hidden-note').textContent()).toBe('1 revoked or expired key is hidden.');

    await page.reload();
    await expect.poll(() => page.locator('#keys-body tr').count(), SLOW).toBe(3);
    expect(await toggle.isChecked()).toBe(true);
    expect(await successor.isVisible()).toBe(false);
    await toggle.uncheck();
    expect(await successor.isVisible()).toBe(true);
    expect(new URL(page.url()).searchParams.has('hide')).toBe(false);
  });

  it('goes back to Free after a confirmation, and the plan shown changes', async () => {
    await openSettings();
    expect(await page.locator('#ws-plan').textContent()).toBe('Trial (service plan)');
    const button = page.getByRole('button', { name: 'Go back to Free' });
    await button.click();
    const dialog = page.getByRole('dialog', { name: 'Go back to the Free plan?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await page.locator('#ws-plan').textContent()).toBe('Trial (service plan)');

    await button.click();
    await dialog.getByRole('button', { name: 'Go back to Free' }).click();
    await expect.poll(() => page.locator('#ws-plan').textContent(), SLOW).toBe('Free');
    expect(await page.locator('#page-notice').textContent()).toContain('Free plan now');
    expect(await page.locator('#trial-banner').isVisible()).toBe(false);
    expect(await button.isVisible()).toBe(false);
    expect(await page.locator('#upgrade-btn').isVisible()).toBe(true);
  });

  it('another workspace makes and revokes a key through the console API', async () => {
    const signup = await fetch(`${server.url}/api/console/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        email: `other-${randomBytes(4).toString('hex')}@example.com`,
        password: 'another long passphrase',
        workspaceName: 'Other Co',
        plan: 'free',
      }),
    });
    expect(signup.status).toBe(201);
    const { csrfToken } = (await signup.json()) as { csrfToken: string };
    const cookie = signup.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const headers = { cookie, 'x-csrf-token': csrfToken, 'content-type': 'application/json' };
    const created = await fetch(`${server.url}/api/console/keys`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ label: 'Other workspace key', scopes: ['usage:read'], expiresIn: 30 }),
    });
    expect(created.status).toBe(201);
    ids.otherKey = ((await created.json()) as { id: string }).id;
    const revoked = await fetch(`${server.url}/api/console/keys/${ids.otherKey}/revoke`, {
      method: 'POST',
      headers,
      body: '{}',
    });
    expect(revoked.status).toBe(200);
  });

  it('lists create, revoke and the plan change, newest first, with actor, IP and user agent', async () => {
    await openSettings();
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Audit log' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL('**/settings/audit-log');
    await auditLoaded();
    expect(await page.getByRole('link', { name: 'Audit log' }).getAttribute('aria-current')).toBe('page');

    const seen = await actions();
    expect(seen[0]).toBe('plan_change');
    expect(seen).toEqual(expect.arrayContaining(['create', 'reveal', 'rotate', 'revoke', 'plan_change']));
    const times = await page
      .locator('#audit-body time')
      .evaluateAll((ts) => ts.map((t) => t.getAttribute('datetime')!));
    expect([...times].sort().reverse()).toEqual(times);

    const plan = auditRows().filter({ has: page.locator('.audit-plan_change') });
    // The action's name comes from the server's one list (the action filter's options).
    expect(await plan.locator('td[data-label="Action"]').textContent()).toBe('Plan changed');
    expect(await plan.locator('td[data-label="Actor"]').textContent()).toBe(`You user:${ids.userId}`);
    expect(await plan.locator('td[data-label="IP address"]').textContent()).toMatch(/127\.0\.0\.1/);
    expect(await plan.locator('td[data-label="User agent"]').textContent()).toContain('Chrome');
    expect(await plan.locator('td[data-label="Details"]').textContent()).toBe(
      'from: trialto: freereason: downgrade',
    );

    const revoke = page.locator('#audit-body tr[data-action="revoke"]');
    expect(await revoke.count()).toBe(1);
    expect(await revoke.locator('td[data-label="Key"] .key-name').textContent()).toBe(XSS_LABEL);
    expect(await revoke.locator('td[data-label="IP address"]').textContent()).toMatch(/127\.0\.0\.1/);
    const creates = page.locator('#audit-body tr[data-action="create"]');
    expect(await creates.count()).toBe(3); // the sign-up key, the hostile label, its successor
  });

  it("never shows another workspace's events, not even when asked for its key", async () => {
    expect(await page.locator('#audit-body').textContent()).not.toContain('Other workspace key');
    expect(await page.locator('#audit-body').textContent()).not.toContain(ids.otherKey.slice(0, 8));
    await openAudit(`?key=${ids.otherKey}`);
    expect(await auditRows().count()).toBe(0);
    expect(await page.locator('#audit-empty').isVisible()).toBe(true);
    const direct = (await page.evaluate(
      `fetch('/api/console/audit-events?action=revoke').then((r) => r.json())`,
    )) as { data: { keyId: string }[] };
    expect(direct.data.map((e) => e.keyId)).toEqual([ids.successor]);
  });

  it('writes a hostile key label as inert text on the audit page', async () => {
    await openAudit();
    expect(await page.locator('#audit-body img, #audit-body script').count()).toBe(0);
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    expect(await page.locator('#key option', { hasText: '<img src=x' }).count()).toBe(2);
  });

  it('filters by action through the URL, and a reload keeps the filter', async () => {
    await openAudit();
    await page.getByLabel('Action').selectOption('revoke');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL('**/settings/audit-log?action=revoke');
    await auditLoaded();
    expect(await actions()).toEqual(['revoke']);
    await page.reload();
    await auditLoaded();
    expect(await page.getByLabel('Action').inputValue()).toBe('revoke');
    expect(await actions()).toEqual(['revoke']);

    await page.getByLabel('Action').selectOption('');
    await page.getByLabel('Key').selectOption(ids.successor);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(`**/settings/audit-log?key=${ids.successor}`);
    await auditLoaded();
    expect(await actions()).toEqual(['revoke', 'reveal', 'create']);

    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await openAudit(`?from=${tomorrow}`);
    expect(await auditRows().count()).toBe(0);
    expect(await page.getByLabel('From').inputValue()).toBe(tomorrow);
  });

  it('shows a bad filter as a readable error, not an empty page', async () => {
    await openAudit('?from=2026-02-30');
    await expect
      .poll(() => page.locator('#page-error').textContent(), SLOW)
      .toBe(
        'The request has invalid fields. From: must be a date (YYYY-MM-DD, UTC) or an ISO 8601 instant with a time zone.',
      );
    expect(await page.locator('#page-error').isVisible()).toBe(true);
  });

  it('pages through the whole log with the keyboard, each event once', async () => {
    await openAudit();
    const all = await eventIds();
    expect(all.length).toBeGreaterThan(5);
    await openAudit('?limit=2');
    const paged: string[] = [];
    for (;;) {
      const ids = await eventIds();
      expect(ids.length).toBeLessThanOrEqual(2);
      paged.push(...(ids as string[]));
      const next = page.getByRole('link', { name: 'Older events' });
      if (!(await next.isVisible())) break;
      await next.focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/cursor=/);
      await auditLoaded();
      expect(await page.getByRole('link', { name: 'Newest events' }).isVisible()).toBe(true);
      expect(new URL(page.url()).searchParams.get('limit')).toBe('2');
    }
    expect(paged).toEqual(all);
  });

  it('is readable at 390 px without sideways scrolling', async () => {
    await openAudit();
    // docs/console-audit.png is a copy of this one, made by hand (support.ts: screenshots).
    await screenshot(page, 'console-audit');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await auditLoaded();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'console-audit-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('ran without a script error or a CSP violation', () => {
    expect(session.scriptProblems).toEqual([]);
  });
});
