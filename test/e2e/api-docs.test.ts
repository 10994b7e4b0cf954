import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';
import {
  warnWithoutChromium,
  hasChromium,
  openBrowser,
  screenshot,
  SLOW,
  type BrowserSession,
} from './support.js';

warnWithoutChromium('api-docs.test.ts', 'the API docs browser tests');

/**
 * `/docs` in real Chromium (docs/api.md#reference): Swagger UI renders the app's own OpenAPI document with
 * every asset from our origin, under the console's strict CSP, with no CSP violation and no
 * request to any other host.
 */
describe.skipIf(!hasChromium)('API reference at /docs', () => {
  let server: TestServer;
  let session: BrowserSession;
  const foreign: string[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    session = await openBrowser(server.url);
    session.page.on('request', (req) => {
      if (!req.url().startsWith(server.url) && !req.url().startsWith('data:')) foreign.push(req.url());
    });
  });
  afterAll(async () => {
    await session?.browser.close();
    await server?.close();
  });

  it('shows the operations of the document, from our origin only, without CSP violations', async () => {
    const { page } = session;
    const res = await page.goto('/docs');
    expect(res?.status()).toBe(200);
    const csp = res?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("img-src 'self' data:");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');

    await expect.poll(() => page.locator('.opblock').count(), SLOW).toBeGreaterThanOrEqual(40);
    await expect
      .poll(() => page.locator('.info .title').textContent(), SLOW)
      .toContain('Vulnerability triage service');
    const summaries = await page.locator('.opblock-summary-path').allTextContents();
    expect(summaries.map((s) => s.replace(/\u200b/g, ''))).toEqual(
      expect.arrayContaining(['/api/v1/triage', '/api/pipeline/scan', '/api/v1/cases/{id}']),
    );

    // Open one operation: its responses render, the problem document among them.
    await page.locator('#operations-Triage-post_api_v1_triage').click();
    await expect.poll(() => page.locator('.responses-table .response').count(), SLOW).toBeGreaterThan(5);
    await expect.poll(() => page.getByText('Problem').first().isVisible(), SLOW).toBe(true);
    await screenshot(page, 'api-docs');

    expect(session.scriptProblems).toEqual([]);
    expect(foreign).toEqual([]);
  });
});
