import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';
import { startProcessWorkers } from '../../src/app/workers.js';
import {
  hasChromium,
  KEY_SHAPE,
  openBrowser,
  screenshot,
  SLOW,
  warnWithoutChromium,
  type BrowserSession,
} from './support.js';

warnWithoutChromium('console-many-cves.test.ts');

/** A cumulative Windows update names a hundred CVEs; two of them (real ones) are in CISA's KEV. */
const CVES = Array.from({ length: 100 }, (_, i) => `CVE-2024-${43400 + i}`);
const KEV = ['CVE-2024-43461', 'CVE-2024-43451'];
/** EPSS for a third of them: the KEV ones high, one unlisted higher still. */
const EPSS: Record<string, number> = Object.fromEntries(
  CVES.filter((_, i) => i % 3 === 0).map((cve, i) => [cve, 0.001 + i / 1000]),
);
EPSS['CVE-2024-43451'] = 0.52;
EPSS['CVE-2024-43461'] = 0.31;
EPSS['CVE-2024-43498'] = 0.88;
const TITLE = '2024-11 Cumulative Update for Windows Server 2022 for x64-based Systems (KB5046616)';

const scanFile = JSON.stringify({
  tool: { name: 'acme-scan', version: '2.3.1' },
  findings: [
    {
      title: TITLE,
      severity: 'critical',
      cveIds: CVES,
      description: 'The remote Windows host is missing security update 5046616.',
      asset: { host: 'fs01.corp.example', ip: '10.0.0.5' },
      ruleId: 'WIN-KB5046616',
    },
    {
      title: 'Outdated OpenSSL',
      severity: 'high',
      cveIds: ['CVE-2022-0778', 'CVE-2023-0286'],
      location: { path: 'Dockerfile', line: 3 },
      asset: { host: 'build-01.example.com', ip: '10.4.0.12' },
    },
    { title: 'Telnet open', severity: 'low', location: { port: 23, protocol: 'tcp' }, asset: '10.4.0.13' },
  ],
});

/**
 * docs/console.md#cases: a case with 100 CVEs stays readable in the Cases list (its most important
 * CVE and a count, the title column at a readable width) and on its page (KEV and highest-EPSS
 * CVEs first, the rest folded), at 1280 and 390 px. The screenshots of docs/console.md come from
 * here (test-results/screenshots/console-*-many-cves*.png, copied by hand).
 */
describe.skipIf(!hasChromium)('a case with 100 CVEs in a real browser', () => {
  let server: TestServer;
  let workers: { close(): Promise<void> };
  let session: BrowserSession;
  let page: Page;
  let dir: string;
  let caseId = '';

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'many-cves-'));
    server = await startTestServer({ env: { SCAN_STORAGE_DIR: dir } });
    workers = await startProcessWorkers(server.deps.config, server.infra, server.deps);
    session = await openBrowser(server.url);
    page = session.page;
    for (const cve of KEV) {
      await server.infra.pool.query(
        `INSERT INTO kev_entries (cve_id, date_added, due_date) VALUES ($1, '2024-11-12', '2024-12-03')
         ON CONFLICT DO NOTHING`,
        [cve],
      );
    }
    for (const [cve, epss] of Object.entries(EPSS)) {
      await server.infra.pool.query(
        `INSERT INTO epss_scores (cve_id, epss, percentile) VALUES ($1, $2, 0.5) ON CONFLICT (cve_id) DO UPDATE SET epss = $2`,
        [cve, epss],
      );
    }

    await page.goto('/signup');
    await page.getByLabel('Work email').fill(`cves-${randomBytes(4).toString('hex')}@example.com`);
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery staple');
    await page.getByLabel('Workspace name').fill('Patch Co');
    await page.getByRole('radio', { name: /14-day trial/ }).check();
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.waitForURL(/\/reveal\/[A-Za-z0-9_-]+$/);
    await page.locator('#reveal-key').filter({ hasText: KEY_SHAPE }).waitFor({ timeout: SLOW.timeout });
    const key = (await page.locator('#reveal-key').textContent()) ?? '';

    const res = await fetch(`${server.url}/api/pipeline/scan?name=nightly`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: scanFile,
    });
    expect(res.status).toBe(202);
    const { scanId } = (await res.json()) as { scanId: string };
    for (let waited = 0; ; waited += 200) {
      const scan = await fetch(`${server.url}/api/pipeline/scan/${scanId}`, {
        headers: { 'x-api-key': key },
      });
      if (((await scan.json()) as { status: string }).status === 'completed') break;
      if (waited > 30_000) throw new Error('the scan did not complete');
      await new Promise((r) => setTimeout(r, 200));
    }
    const list = (await (
      await fetch(`${server.url}/api/v1/cases?cve=CVE-2024-43400`, { headers: { 'x-api-key': key } })
    ).json()) as { data: { id: string; leadCveId: string }[] };
    caseId = list.data[0]!.id;
    // In KEV first, then the higher EPSS of the two.
    expect(list.data[0]!.leadCveId).toBe('CVE-2024-43451');
  }, 120_000);

  afterAll(async () => {
    await session?.browser.close();
    await workers?.close();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const windowsRow = () => page.locator(`#cases-body tr[data-case-id="${caseId}"]`);

  async function openList(): Promise<void> {
    await page.goto('/cases');
    await expect.poll(() => windowsRow().count(), SLOW).toBe(1);
  }

  async function openCase(): Promise<void> {
    await page.goto(`/cases/${caseId}`);
    await expect.poll(() => page.locator('#cves-body tr').count(), SLOW).toBeGreaterThan(0);
  }

  it('lists the most important CVE and a count of the rest, with a readable title column', async () => {
    await openList();
    const cell = windowsRow().locator('td[data-label="CVEs"]');
    expect((await cell.textContent())?.trim()).toBe('CVE-2024-43451 +99 more');
    const title = windowsRow().locator('th[scope="row"]');
    const box = (await title.boundingBox())!;
    expect(box.width).toBeGreaterThanOrEqual(256);
    expect(await title.locator('.case-title').textContent()).toBe(TITLE);
    // The title wraps into a few lines (about 20 px each), not a word per line (14 lines).
    const titleBox = (await title.locator('.case-title').boundingBox())!;
    expect(titleBox.height).toBeLessThanOrEqual(110);
    await screenshot(page, 'console-cases-many-cves');
  });

  it('shows KEV-listed and highest-EPSS CVEs first on the case page, the rest folded', async () => {
    await openCase();
    const first = await page
      .locator('#cves-body tr')
      .evaluateAll((rows) => rows.map((r) => r.querySelector('a')?.textContent ?? ''));
    expect(first).toHaveLength(10);
    expect(first.slice(0, 3)).toEqual(['CVE-2024-43451', 'CVE-2024-43461', 'CVE-2024-43498']);
    const more = page.locator('#cves-more');
    expect(await more.isVisible()).toBe(true);
    expect(await more.getAttribute('open')).toBeNull();
    expect(await page.locator('#cves-more-summary').textContent()).toContain('90 more CVEs');
    expect(await page.locator('#cves-more-body tr').count()).toBe(90);
    expect(await page.locator('#cves-more-body tr').first().isVisible()).toBe(false);
    await screenshot(page, 'console-case-many-cves');
    await page.locator('#cves-more-summary').click();
    expect(await page.locator('#cves-more-body tr').first().isVisible()).toBe(true);
  });

  it('stays readable at 390 px', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await openList();
    expect(
      await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'),
    ).toBeLessThanOrEqual(0);
    expect((await windowsRow().locator('td[data-label="CVEs"]').textContent())?.trim()).toContain('+99 more');
    await windowsRow().evaluate((el) => el.scrollIntoView());
    await screenshot(page, 'console-cases-many-cves-phone', { fullPage: false });
    await openCase();
    expect(
      await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'),
    ).toBeLessThanOrEqual(0);
    await page.locator('#cves-title').evaluate((el) => el.scrollIntoView());
    await screenshot(page, 'console-case-many-cves-phone', { fullPage: false });
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
