import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page, Response } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';
import {
  warnWithoutChromium,
  expectStrictPageHeaders,
  hasChromium,
  KEY_SHAPE,
  keysMe as keysMeAt,
  openBrowser,
  screenshot,
  SLOW,
  withoutRequestId,
  type BrowserSession,
} from './support.js';

warnWithoutChromium('console.test.ts');

/**
 * The console journey in real Chromium against the real service over real HTTP
 * (docs/console.md#sign-up-and-api-keys, docs/api.md#keys): sign-up, one-time reveal, Settings > API keys, create, rotate,
 * revoke, statement, upgrade, sign-out and sign-in (security cases: console-security.test.ts).
 * The tests run in order and share one browser session, like a person would.
 */
describe.skipIf(!hasChromium)('console pages in a real browser', () => {
  let server: TestServer;
  let session: BrowserSession;
  let context: BrowserContext;
  let page: Page;
  const email = `e2e-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'correct horse battery staple';
  const workspaceName = 'Acme Security';
  const keys = {
    first: '',
    firstId: '',
    created: '',
    createdId: '',
    successor: '',
    successorId: '',
    workspaceId: '',
  };

  beforeAll(async () => {
    server = await startTestServer();
    session = await openBrowser(server.url);
    ({ context, page } = session);
  });

  afterAll(async () => {
    await session?.browser.close();
    await server?.close();
  });

  const keysMe = (key: string) => keysMeAt(server.url, key);

  /** Waits for the reveal page to show its key and returns it. */
  async function revealedKey(): Promise<string> {
    await page.waitForURL(/\/reveal\/[A-Za-z0-9_-]+$/);
    await expect.poll(() => page.locator('#reveal-key').textContent(), SLOW).toMatch(KEY_SHAPE);
    return (await page.locator('#reveal-key').textContent()) ?? '';
  }

  function keyRow(id: string) {
    return page.locator(`#keys-body tr[data-key-id="${id}"]`);
  }

  async function openSettings(): Promise<Response | null> {
    const res = await page.goto('/settings/api-keys');
    await expect.poll(() => page.locator('#keys-body tr').count(), SLOW).toBeGreaterThan(0);
    await expect.poll(() => page.locator('#statement-card').getAttribute('aria-busy'), SLOW).toBe('false');
    return res;
  }

  it('signs up for a trial and lands on the one-time reveal page with the key, a copy button and a warning', async () => {
    const signup = await page.goto('/');
    expect(new URL(page.url()).pathname).toBe('/signup');
    expectStrictPageHeaders(signup);

    await page.getByLabel('Work email').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByLabel('Workspace name').fill(workspaceName);
    await page.getByRole('radio', { name: /14-day trial/ }).check();
    await page.evaluate('document.activeElement && document.activeElement.blur()');
    await screenshot(page, 'signup');

    const revealResponse = page.waitForResponse(
      (r) => /\/reveal\/[^/]+$/.test(new URL(r.url()).pathname) && r.request().resourceType() === 'document',
    );
    await page.getByRole('button', { name: 'Create workspace' }).click();
    expectStrictPageHeaders(await revealResponse);
    keys.first = await revealedKey();

    await expect
      .poll(() => page.getByRole('alert').first().textContent(), SLOW)
      .toContain('It will not be shown again');
    const copy = page.getByRole('button', { name: 'Copy key' });
    expect(await copy.isVisible()).toBe(true);
    await copy.click();
    await expect
      .poll(() => page.locator('#copy-status').textContent(), SLOW)
      .toBe('Copied to the clipboard.');
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(keys.first);
    expect(await page.evaluate('[localStorage.length, sessionStorage.length]')).toEqual([0, 0]);
    await screenshot(page, 'reveal');
  });

  it('the revealed key works against GET /api/v1/keys/me', async () => {
    const me = await keysMe(keys.first);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      status: 'active',
      rotationHealth: 'healthy',
      workspace: { name: workspaceName, plan: 'trial', trialDaysLeft: 14 },
    });
    keys.firstId = String(me.body.id);
    keys.workspaceId = String((me.body.workspace as { id: string }).id);
  });

  it('reloading the reveal page shows "already revealed" and no key', async () => {
    await page.reload();
    await expect.poll(() => page.locator('#reveal-gone').isVisible(), SLOW).toBe(true);
    expect(await page.locator('#reveal-gone').textContent()).toContain('This key has already been revealed.');
    expect(await page.locator('#reveal-key').textContent()).toBe('');
    expect(await page.content()).not.toContain(keys.first);
    await screenshot(page, 'reveal-already-revealed');
  });

  it('settings shows the workspace, a 14-day trial banner, the key masked, Active and rotation healthy', async () => {
    await page.getByRole('link', { name: /Go to Settings/ }).click();
    await page.waitForURL('**/settings/api-keys');
    const res = await openSettings();
    expectStrictPageHeaders(res);

    expect(await page.locator('#ws-name').textContent()).toBe(workspaceName);
    expect(await page.locator('#ws-plan').textContent()).toBe('Trial (service plan)');
    expect(await page.locator('#trial-banner').isVisible()).toBe(true);
    expect(await page.locator('#trial-days').textContent()).toBe('14 days left');
    expect(await page.locator('#ws-status').textContent()).toBe('Active');
    expect(await page.locator('#ws-active-keys').textContent()).toBe('1');
    expect(await page.locator('#ws-ai-calls').textContent()).toBe('0 of 50,000');
    expect(await page.locator('#statement-empty').textContent()).toMatch(/^No AI calls in \w+ \d{4}\./);

    const row = keyRow(keys.firstId);
    const masked = `${keys.first.slice(0, 8)}${'*'.repeat(16)}${keys.first.slice(-4)}`;
    expect(await row.locator('code.masked').textContent()).toBe(masked);
    expect(await row.locator('.status').textContent()).toBe('Active');
    expect(await row.locator('.health').textContent()).toBe('Rotation healthy');
    expect(await row.locator('.scopes li').allTextContents()).toEqual([
      'triage:write',
      'scans:write',
      'scans:read',
      'cases:write',
      'usage:read',
    ]);
    expect(await page.content()).not.toContain(keys.first);
  });

  it('creates a key with a label, scopes and an expiry, and reveals it once', async () => {
    await page.getByLabel('Label', { exact: true }).fill('CI pipeline');
    await page.getByRole('checkbox', { name: /scans:write/ }).uncheck();
    await page.getByRole('checkbox', { name: /keys:write/ }).check();
    await page.getByLabel('Expires').selectOption('30');
    await page.getByRole('button', { name: 'Create key' }).last().click();

    keys.created = await revealedKey();
    const me = await keysMe(keys.created);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      label: 'CI pipeline',
      scopes: ['triage:write', 'scans:read', 'cases:write', 'usage:read', 'keys:write'],
    });
    const days = (Date.parse(String(me.body.expiresAt)) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
    keys.createdId = String(me.body.id);

    // Leaving and coming back (history, back/forward cache) shows no key either.
    await page.getByRole('link', { name: /I have stored it/ }).click();
    await page.waitForURL('**/settings/api-keys');
    await page.goBack();
    await expect.poll(() => page.locator('#reveal-gone').isVisible(), SLOW).toBe(true);
    expect(await page.content()).not.toContain(keys.created);
  });

  it('rotates a key with a grace period: the successor works and the old key keeps working during the grace', async () => {
    await openSettings();
    await keyRow(keys.createdId).getByRole('button', { name: 'Rotate key CI pipeline' }).click();
    const dialog = page.getByRole('dialog', { name: /Rotate “CI pipeline”/ });
    expect(await dialog.isVisible()).toBe(true);
    await dialog.getByLabel('Grace period (hours)').fill('2');
    await dialog.getByRole('button', { name: 'Rotate key' }).click();

    keys.successor = await revealedKey();
    expect(keys.successor).not.toBe(keys.created);
    const successor = await keysMe(keys.successor);
    expect(successor.status).toBe(200);
    expect(successor.body).toMatchObject({ label: 'CI pipeline', status: 'active' });
    keys.successorId = String(successor.body.id);
    const old = await keysMe(keys.created);
    expect(old.status).toBe(200);
    expect(old.body).toMatchObject({ status: 'rotating', successorId: keys.successorId });

    await openSettings();
    expect(await keyRow(keys.createdId).locator('.status').textContent()).toBe('Rotating');
    expect(await keyRow(keys.successorId).locator('.status').textContent()).toBe('Active');
  });

  it('revokes a key only after confirmation; the revoked key then gets 401 key_revoked', async () => {
    const revoke = keyRow(keys.successorId).getByRole('button', { name: 'Revoke key CI pipeline' });
    await revoke.click();
    const dialog = page.getByRole('dialog', { name: /Revoke “CI pipeline”/ });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await dialog.isVisible()).toBe(false);
    await revoke.focus();
    await page.keyboard.press('Enter');
    expect(await dialog.isVisible()).toBe(true);
    await page.keyboard.press('Escape');
    expect(await dialog.isVisible()).toBe(false);
    expect((await keysMe(keys.successor)).status).toBe(200);

    await revoke.click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(() => page.locator('#page-notice').textContent(), SLOW).toContain('is revoked');
    await expect.poll(() => keyRow(keys.successorId).locator('.status').textContent(), SLOW).toBe('Revoked');

    await expect
      .poll(async () => (await keysMe(keys.successor)).status, { timeout: 2000, interval: 100 })
      .toBe(401);
    const refused = await keysMe(keys.successor);
    expect(withoutRequestId(refused.body)).toEqual({
      type: 'https://docs.vulntriage.dev/errors/key_revoked',
      title: 'API key revoked',
      status: 401,
      code: 'key_revoked',
      detail: expect.any(String),
    });
  });

  it('shows the monthly statement per key and model tier', async () => {
    // Three real triage calls over HTTP with the local engine: two routine findings and one
    // high-risk one (CRITICAL with CVSS >= 9.0), which the router starts one tier up. The expected
    // figures are computed here from each answer's `usage` and the catalog prices (USD per
    // million tokens, as pico-dollars per token), independently of the ledger code.
    const triage = async (secret: string, body: object) => {
      const res = await fetch(`${server.url}/api/v1/triage`, {
        method: 'POST',
        headers: { 'x-api-key': secret, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { usage: { inputTokens: number; outputTokens: number } }).usage;
    };
    const routine = {
      title: 'Outdated OpenSSL on an internal host',
      severity: 'MEDIUM',
      description: 'OpenSSL 1.1.1 is end of life',
    };
    const critical = {
      title: 'Pre-auth RCE in the VPN gateway',
      severity: 'CRITICAL',
      cvssScore: 9.8,
      description: 'Vendor advisory, no patch yet',
    };
    const first = await triage(keys.first, routine);
    const firstCritical = await triage(keys.first, critical);
    const created = await triage(keys.created, routine);
    const PICOS = { routine: [100_000n, 400_000n], v1: [3_000_000n, 15_000_000n] } as const;
    const picos = (u: { inputTokens: number; outputTokens: number }, [i, o]: readonly [bigint, bigint]) =>
      BigInt(u.inputTokens) * i + BigInt(u.outputTokens) * o;
    const toMicros = (p: bigint) => (p + 500_000n) / 1_000_000n; // half up, as the ledger rounds
    // One precision per table (docs/console.md#sign-up-and-api-keys): 4 decimals when any non-zero amount of the
    // table is below $0.01, else 2. Three triage calls cost well under a cent.
    const usdIn = (amounts: bigint[]) => (micros: bigint) => {
      const digits = amounts.some((m) => m > 0n && m < 10_000n) ? 4 : 2;
      return new Intl.NumberFormat('en-US', {
        style: 'currency',
        currency: 'USD',
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
      }).format(Number(micros) / 1e6);
    };
    const rowsPicos = [
      picos(first, PICOS.routine),
      picos(firstCritical, PICOS.v1),
      picos(created, PICOS.routine),
    ];
    const totalMicros = toMicros(rowsPicos.reduce((a, b) => a + b, 0n));
    const usd = usdIn([...rowsPicos.map(toMicros), totalMicros]);
    const tokens = [first, firstCritical, created].reduce((n, u) => n + u.inputTokens + u.outputTokens, 0);
    await openSettings();
    expect(await page.locator('#ws-ai-calls').textContent()).toBe('3 of 50,000');
    const rows = page.locator('#statement-body tr');
    expect(await rows.count()).toBe(3);
    const firstLines = page.locator(`#statement-body tr[data-key-id="${keys.firstId}"]`);
    expect(await firstLines.locator('td').first().textContent()).toBe('svc-triage-routine');
    expect(await firstLines.nth(1).locator('td').allTextContents()).toEqual([
      'svc-triage-v1',
      '1',
      firstCritical.inputTokens.toLocaleString('en-US'),
      firstCritical.outputTokens.toLocaleString('en-US'),
      usd(toMicros(rowsPicos[1]!)),
    ]);
    expect(await page.locator('#statement-foot').textContent()).toContain(usd(totalMicros));
    expect(await page.locator('#ws-tokens').textContent()).toBe(tokens.toLocaleString('en-US'));
    expect(await page.locator('#ws-spend').textContent()).toBe(usdIn([totalMicros])(totalMicros));
    const firstTokens =
      first.inputTokens + first.outputTokens + firstCritical.inputTokens + firstCritical.outputTokens;
    expect(await keyRow(keys.firstId).locator('td[data-label="Tokens"]').textContent()).toBe(
      firstTokens.toLocaleString('en-US'),
    );
    expect(await page.content()).not.toMatch(/svc_[0-9A-Za-z]{38}/);
    await screenshot(page, 'settings-api-keys');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'settings-api-keys-phone', { fullPage: false });
    await page.locator('#keys-card').scrollIntoViewIfNeeded();
    await screenshot(page, 'settings-api-keys-phone-keys', { fullPage: false });
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('upgrades to the service plan', async () => {
    await page.locator('#upgrade-btn').click();
    await page
      .getByRole('dialog', { name: 'Upgrade to the service plan?' })
      .getByRole('button', { name: 'Upgrade' })
      .click();
    await expect.poll(() => page.locator('#ws-plan').textContent(), SLOW).toBe('Service');
    expect(await page.locator('#trial-banner').isVisible()).toBe(false);
    expect(await page.locator('#upgrade-btn').isVisible()).toBe(false);
    // The plan reaches the key verifier's cache through the invalidation bus: eventually, within a second or so.
    await expect
      .poll(async () => (await keysMe(keys.first)).body, SLOW)
      .toMatchObject({ workspace: { plan: 'service' } });
  });

  it('logs out, refuses the settings page signed out, and logs back in', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL('**/login?notice=signed-out');
    expect(await page.getByRole('status').first().textContent()).toContain('You have signed out.');

    await page.goto('/settings/api-keys');
    expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe('/login?next=/settings/api-keys');

    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => page.locator('#form-error').textContent(), SLOW)
      .toBe('The email or password is not right.');

    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/settings/api-keys');
    await expect.poll(() => page.locator('#ws-name').textContent(), SLOW).toBe(workspaceName);
    expect(await page.locator('#ws-plan').textContent()).toBe('Service');
    // Signed in, the landing page is the dashboard (docs/console.md#dashboard).
    await page.goto('/');
    expect(new URL(page.url()).pathname).toBe('/');
    expect(await page.locator('#page-title').textContent()).toBe('Dashboard');
  });

  it('sends an expired session back to sign-in and then back to settings', async () => {
    await openSettings();
    await context.clearCookies();
    await page.getByLabel('Label', { exact: true }).fill('after expiry');
    await page.getByRole('button', { name: 'Create key' }).last().click();
    await page.waitForURL('**/login?notice=expired&next=/settings/api-keys');
    expect(await page.getByRole('status').first().textContent()).toContain('Your session has ended.');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/settings/api-keys');
    await expect.poll(() => page.locator('#keys-body tr').count(), SLOW).toBe(3);
  });

  it('ran the whole journey without a script error or a CSP violation', () => {
    expect(session.scriptProblems).toEqual([]);
  });
});
