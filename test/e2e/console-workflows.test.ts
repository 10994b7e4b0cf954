import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';
import { startProcessWorkers } from '../../src/app/workers.js';
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

warnWithoutChromium('console-workflows.test.ts');

const XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>';
const PARSE = { timeout: 30_000, interval: 200 };

/**
 * Settings > Workflows (docs/console.md#workflows) in real Chromium against the real service: create a signed
 * webhook workflow with a live preview of its mapped summary for a sample case, send a test
 * delivery to a receiver on 127.0.0.1, see the deliveries, edit and disable it, and see a failing
 * receiver's error. Names and errors are written as text.
 */
describe.skipIf(!hasChromium)('console Settings > Workflows in a real browser', () => {
  let server: TestServer;
  let workers: { close(): Promise<void> };
  let session: BrowserSession;
  let page: Page;
  let dir: string;
  let receiver: Server;
  let receiverUrl = '';
  const received: { path: string; body: string }[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'console-wf-'));
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body });
        res.writeHead(req.url === '/fail' ? 500 : 200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const addr = receiver.address();
    receiverUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    server = await startTestServer({
      env: {
        SCAN_STORAGE_DIR: dir,
        WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true',
      },
    });
    workers = await startProcessWorkers(server.deps.config, server.infra, server.deps);
    session = await openBrowser(server.url);
    page = session.page;
  });

  afterAll(async () => {
    await session?.browser.close();
    await workers?.close();
    await server?.close();
    receiver?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('signs up and has a case to preview with', async () => {
    await page.goto('/signup');
    await page.getByLabel('Work email').fill(`wf-${randomBytes(4).toString('hex')}@example.com`);
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery staple');
    await page.getByLabel('Workspace name').fill('Flow Co');
    await page.getByRole('radio', { name: /14-day trial/ }).check();
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.waitForURL(/\/reveal\/[A-Za-z0-9_-]+$/);
    await expect.poll(() => page.locator('#reveal-key').textContent(), SLOW).toMatch(KEY_SHAPE);
    await page.goto('/scans');
    await page.locator('#upload-file').setInputFiles(path.resolve('test/fixtures/parsers/cli-findings.json'));
    await page.getByRole('button', { name: 'Upload' }).click();
    await expect
      .poll(() => page.locator('#scans-body tr').first().getAttribute('data-status'), PARSE)
      .toBe('completed');
  });

  it('creates a webhook workflow with a live preview, then test-delivers it', async () => {
    const res = await page.goto('/settings/workflows');
    expectStrictPageHeaders(res);
    await expect.poll(() => page.locator('#workflows-card').getAttribute('aria-busy'), SLOW).toBe('false');
    expect(await page.locator('#wf-empty').isVisible()).toBe(true);

    await page.getByLabel('Name').fill(`Pager ${XSS}`);
    await page.getByLabel('Webhook URL', { exact: true }).fill(`${receiverUrl}/hook`);
    await page.getByLabel('Summary template').fill('[{{case.severity}}] {{case.title}}');
    await expect
      .poll(() => page.locator('#preview-summary').textContent(), SLOW)
      .toMatch(/^\[(CRITICAL|HIGH|LOW)\] (SQL injection in login handler|Outdated OpenSSL|Telnet open)$/);
    await page.getByLabel('Summary template').fill('{{case.nope}}');
    await expect.poll(() => page.locator('#preview-error').isVisible(), SLOW).toBe(true);
    await page.getByLabel('Summary template').fill('[{{case.severity}}] {{case.title}}');
    await page
      .getByRole('group', { name: 'Rule: severity' })
      .getByRole('checkbox', { name: 'Critical' })
      .check();
    await page.getByRole('button', { name: 'Create workflow' }).click();
    await expect.poll(() => page.locator('#page-notice').textContent(), SLOW).toContain('whsec_');
    const row = page.locator('#wf-body tr').first();
    await expect.poll(() => row.locator('.wf-name').textContent(), SLOW).toBe(`Pager ${XSS}`);
    expect(await row.textContent()).toContain('severity CRITICAL');

    await row.getByRole('button', { name: 'Test delivery' }).click();
    await expect
      .poll(() => page.locator('#page-notice').textContent(), PARSE)
      .toContain('Test delivered (HTTP 200)');
    expect(received.some((r) => r.path === '/hook')).toBe(true);
    await expect.poll(() => page.locator('#deliveries-list li').count(), SLOW).toBeGreaterThan(0);
    expect(await page.locator('#deliveries-list li').first().textContent()).toContain('workflow.test');
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    await screenshot(page, 'console-workflows');
  });

  it('edits and disables a workflow, and shows a failing receiver’s error', async () => {
    const row = page.locator('#wf-body tr').first();
    await row.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Name').fill('Pager');
    await page.getByRole('button', { name: 'Save workflow' }).click();
    await expect.poll(() => page.locator('#wf-body tr .wf-name').first().textContent(), SLOW).toBe('Pager');
    await page.locator('#wf-body tr').first().getByRole('button', { name: 'Disable' }).click();
    await expect.poll(() => page.locator('#wf-body tr').first().textContent(), SLOW).toContain('(disabled)');

    await page.getByLabel('Name').fill('Broken receiver');
    await page.getByLabel('Webhook URL', { exact: true }).fill(`${receiverUrl}/fail`);
    await page.getByRole('button', { name: 'Create workflow' }).click();
    const broken = page.locator('#wf-body tr', { hasText: 'Broken receiver' });
    await expect.poll(() => broken.count(), SLOW).toBe(1);
    await broken.getByRole('button', { name: 'Test delivery' }).click();
    await expect.poll(() => page.locator('#page-notice').textContent(), PARSE).toContain('Test failed');
    await expect.poll(() => broken.locator('.wf-error').isVisible(), SLOW).toBe(true);
    expect(session.scriptProblems).toEqual([]);
  });
});
