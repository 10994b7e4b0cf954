import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';
import { testRedisUrl } from '../helpers/db.js';
import { warnWithoutChromium, hasChromium, launchChromium, screenshot, SLOW } from './support.js';

warnWithoutChromium('queue-dashboard.test.ts', 'the queue dashboard browser tests');

const ADMIN_TOKEN = 'admin-token-for-e2e-0123456789abcdef';

/**
 * Bull Board at `/admin/queues` (Redis queues only) in real Chromium: it lists the service's
 * queues under a strict CSP, with no CSP violation and no request to another origin (its
 * Google Fonts link is removed; README: Operations).
 */
describe.skipIf(!hasChromium || !testRedisUrl())('queue dashboard in a browser', () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startTestServer({
      env: { REDIS_URL: testRedisUrl(), REDIS_PREFIX: `qd${Date.now().toString(36)}`, ADMIN_TOKEN },
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('lists the queues from our origin only, without CSP violations', async () => {
    const context = await browser.newContext({
      baseURL: server.url,
      viewport: { width: 1280, height: 800 },
      httpCredentials: { username: 'ops', password: ADMIN_TOKEN },
    });
    const page = await context.newPage();
    const problems: string[] = [];
    const foreign: string[] = [];
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text()))
        problems.push(msg.text());
    });
    page.on('request', (req) => {
      const url = req.url();
      if (!url.startsWith(server.url) && !url.startsWith('data:')) foreign.push(url);
    });

    const res = await page.goto('/admin/queues');
    expect(res?.status()).toBe(200);
    const csp = res?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("font-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await res!.text();
    expect(html).not.toContain('fonts.googleapis.com');

    for (const queue of ['scan-ingest', 'triage', 'exports'])
      await expect.poll(() => page.getByText(queue).first().isVisible(), SLOW).toBe(true);
    await screenshot(page, 'queue-dashboard');
    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);
    await context.close();
  });
});
