import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
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

warnWithoutChromium('console-data.test.ts');

/** Text that would run script if any page wrote it as markup. */
const XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>';
const FIXTURE = path.resolve('test/fixtures/parsers/cli-findings.json');
const KEV_CVE = 'CVE-2022-0778';
const PARSE = { timeout: 30_000, interval: 200 };

interface ApiCase {
  id: string;
  title: string;
  severity: string;
  status: string;
  assignee?: string | null;
  tags?: string[];
  acceptance?: { expiresAt: string; note: string | null } | null;
  history?: { to: string; note: string | null; actor: string }[];
}

/**
 * The Scans, Cases, Case and Dashboard pages of docs/console.md in real Chromium against the real
 * service with its workers: a scan uploaded from the page parses to completion, the case filters
 * give exactly the API's list, a bulk status change lands in each case's history, an export
 * downloads and parses, another workspace's case is 404, and hostile text from scan files and
 * upload options is shown as text. The tests run in order on one signed-in browser.
 */
describe.skipIf(!hasChromium)('console scans and cases in a real browser', () => {
  let server: TestServer;
  let workers: { close(): Promise<void> };
  let session: BrowserSession;
  let page: Page;
  let dir: string;
  let apiKey = '';
  let ownerEmail = '';
  const caseIds: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'console-data-'));
    // One row is past the direct export limit, so the export job path (progress, then link) runs too.
    server = await startTestServer({ env: { SCAN_STORAGE_DIR: dir, EXPORT_SYNC_MAX_ROWS: '2' } });
    workers = await startProcessWorkers(server.deps.config, server.infra, server.deps);
    session = await openBrowser(server.url);
    page = session.page;
    await server.infra.pool.query(
      `INSERT INTO kev_entries (cve_id, date_added, due_date) VALUES ($1, '2024-01-10', '2024-01-31') ON CONFLICT DO NOTHING`,
      [KEV_CVE],
    );
    await server.infra.pool.query(
      `INSERT INTO epss_scores (cve_id, epss, percentile) VALUES ($1, 0.42, 0.97) ON CONFLICT DO NOTHING`,
      [KEV_CVE],
    );
  });

  afterAll(async () => {
    await session?.browser.close();
    await workers?.close();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function api<T>(p: string): Promise<T> {
    const res = await fetch(`${server.url}${p}`, { headers: { 'X-API-Key': apiKey } });
    expect(res.status, p).toBe(200);
    return (await res.json()) as T;
  }

  async function signUp(p: Page, name: string): Promise<string> {
    await p.goto('/signup');
    const email = `Data-${randomBytes(4).toString('hex')}@example.com`;
    if (!ownerEmail) ownerEmail = email;
    await p.getByLabel('Work email').fill(email);
    await p.getByLabel('Password', { exact: true }).fill('correct horse battery staple');
    await p.getByLabel('Workspace name').fill(name);
    await p.getByRole('radio', { name: /14-day trial/ }).check();
    await p.getByRole('button', { name: 'Create workspace' }).click();
    await p.waitForURL(/\/reveal\/[A-Za-z0-9_-]+$/);
    await expect.poll(() => p.locator('#reveal-key').textContent(), SLOW).toMatch(KEY_SHAPE);
    return (await p.locator('#reveal-key').textContent()) ?? '';
  }

  const scanRows = () => page.locator('#scans-body tr');
  const xssRan = () => page.evaluate('window.__xss');

  it('uploads a fixture from the Scans page and watches it complete', async () => {
    apiKey = await signUp(page, 'Data Co');
    const res = await page.goto('/scans');
    expectStrictPageHeaders(res);
    await expect.poll(() => page.locator('#scans-card').getAttribute('aria-busy'), SLOW).toBe('false');
    expect(await page.locator('#scans-empty').isVisible()).toBe(true);

    await page.locator('#upload-file').setInputFiles(FIXTURE);
    await page.getByLabel('Name').fill('Nightly CLI');
    await page.getByRole('button', { name: 'Upload' }).click();
    await expect
      .poll(() => page.locator('#upload-status').textContent(), SLOW)
      .toContain('parsing has started');
    expect(await page.locator('#upload-progress').getAttribute('value')).toBe('100');
    await expect.poll(() => scanRows().first().getAttribute('data-status'), PARSE).toBe('completed');
    const first = scanRows().first();
    expect(await first.locator('.scan-name').textContent()).toBe('Nightly CLI');
    expect(await first.locator('td[data-label="New cases"]').textContent()).toBe('3');
    expect(await first.textContent()).toContain('from the console');
    expect(await first.textContent()).toContain('Critical 1');
  });

  it('takes a dropped file, and shows hostile scan names, assets, titles and evidence as text', async () => {
    const hostile = JSON.stringify({
      tool: { name: 'xss-scan' },
      findings: [
        {
          title: `Title ${XSS}`,
          severity: 'medium',
          description: `Evidence ${XSS}`,
          location: 'src/a.ts:1',
          asset: `asset-${XSS}`,
          ruleId: 'XSS-1',
        },
      ],
    });
    await page.getByLabel('Name').fill(`Scan ${XSS}`);
    await page.getByLabel('Asset').fill(`ctx-${XSS}`);
    // A DataTransfer built in the page, as a person's drag from the file manager would bring it.
    const drop = await page.evaluateHandle(`(() => {
      const dt = new DataTransfer();
      dt.items.add(new File([${JSON.stringify(hostile)}], 'hostile.json', { type: 'application/json' }));
      return dt;
    })()`);
    await page.locator('#drop-zone').dispatchEvent('drop', { dataTransfer: drop });
    expect(await page.locator('#upload-file-name').textContent()).toContain('hostile.json');
    await page.getByRole('button', { name: 'Upload' }).click();
    await expect.poll(() => scanRows().count(), SLOW).toBe(2);
    await expect.poll(() => scanRows().first().getAttribute('data-status'), PARSE).toBe('completed');
    expect(await scanRows().first().locator('.scan-name').textContent()).toBe(`Scan ${XSS}`);
    expect(await scanRows().first().locator('.asset').textContent()).toBe(`Asset: ctx-${XSS}`);

    await page.goto('/cases?severity=MEDIUM');
    await expect.poll(() => page.locator('#cases-body tr').count(), SLOW).toBe(1);
    const row = page.locator('#cases-body tr').first();
    expect(await row.locator('.case-title').textContent()).toBe(`Title ${XSS}`);
    expect(await row.locator('.asset').textContent()).toContain(XSS);
    await row.locator('.case-title').click();
    await expect.poll(() => page.locator('#page-title').textContent(), SLOW).toBe(`Title ${XSS}`);
    await expect.poll(() => page.locator('#evidence pre.excerpt').count(), SLOW).toBeGreaterThan(0);
    expect(await page.locator('#evidence pre.excerpt').first().textContent()).toContain('<script>');
    expect(await page.locator('#case-asset').textContent()).toContain(XSS);
    expect(await page.locator('#evidence img, #cases-body img, #case-facts img').count()).toBe(0);
    expect(await xssRan()).toBeUndefined();
    await screenshot(page, 'console-case-hostile');
    expect(session.scriptProblems).toEqual([]);
  });

  it('shows a failed scan with its reason, line and column', async () => {
    await page.goto('/scans');
    await page.locator('#upload-file').setInputFiles({
      name: 'broken.json',
      mimeType: 'application/json',
      buffer: Buffer.from(
        '{"tool": {"name": "x"},\n "findings": [ {"title": "a", "severity": "high"},\n  {oops} ]}',
      ),
    });
    await page.getByLabel('Format', { exact: true }).selectOption('cli');
    await page.getByRole('button', { name: 'Upload' }).click();
    await expect.poll(() => scanRows().count(), SLOW).toBe(3);
    await expect.poll(() => scanRows().first().getAttribute('data-status'), PARSE).toBe('failed');
    expect(await scanRows().first().locator('.scan-error').textContent()).toMatch(/^Invalid JSON/);
    expect(await scanRows().first().locator('.scan-error-where').textContent()).toMatch(
      /^Line 3, column \d+$/,
    );
    await screenshot(page, 'console-scans');
  });

  it('filters cases by severity and KEV and lists exactly what the API lists', async () => {
    await page.goto('/cases');
    await expect.poll(() => page.locator('#cases-card').getAttribute('aria-busy'), SLOW).toBe('false');
    const all = await api<{ data: ApiCase[] }>('/api/v1/cases');
    caseIds.push(...all.data.map((c) => c.id));
    expect(await page.locator('#count-total').textContent()).toBe(String(all.data.length));

    const severity = page.getByRole('group', { name: 'Severity (scanner)' });
    await severity.getByRole('checkbox', { name: 'High' }).check();
    await severity.getByRole('checkbox', { name: 'Critical' }).check();
    await page.getByLabel('CISA KEV').selectOption('true');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL('**/cases?severity=CRITICAL%2CHIGH&kev=true');
    await expect.poll(() => page.locator('#cases-card').getAttribute('aria-busy'), SLOW).toBe('false');
    const shown = await page
      .locator('#cases-body tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-case-id')));
    const listed = await api<{ data: ApiCase[] }>('/api/v1/cases?severity=CRITICAL,HIGH&kev=true');
    expect(listed.data.length).toBe(1);
    expect(shown).toEqual(listed.data.map((c) => c.id));
    expect(await page.locator('#count-total').textContent()).toBe('1');
    expect(await page.locator('#count-severity-HIGH').textContent()).toBe('1');
    expect(await page.locator('#count-priority-UNTRIAGED').textContent()).toBe('1');

    await page.getByLabel('CISA KEV').selectOption('false');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL('**/cases?severity=CRITICAL%2CHIGH&kev=false');
    await expect.poll(() => page.locator('#cases-card').getAttribute('aria-busy'), SLOW).toBe('false');
    const notKev = await api<{ data: ApiCase[] }>('/api/v1/cases?severity=CRITICAL,HIGH&kev=false');
    await expect
      .poll(
        () =>
          page
            .locator('#cases-body tr')
            .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-case-id'))),
        SLOW,
      )
      .toEqual(notKev.data.map((c) => c.id));

    // The back button is the previous filter.
    await page.goBack();
    await page.waitForURL('**/cases?severity=CRITICAL%2CHIGH&kev=true');
    await expect.poll(() => page.getByLabel('CISA KEV').inputValue(), SLOW).toBe('true');
    await expect.poll(() => page.locator('#cases-body tr').count(), SLOW).toBe(1);

    // EPSS at least and the scanner: the same list as the API's.
    await page.goto('/cases');
    await page.getByLabel('EPSS at least').fill('0.3');
    await page.getByLabel('Scanner').fill('acme-scan');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL('**/cases?scanner=acme-scan&epssMin=0.3');
    const byEpss = await api<{ data: ApiCase[] }>('/api/v1/cases?scanner=acme-scan&epssMin=0.3');
    expect(byEpss.data).toHaveLength(1);
    await expect
      .poll(
        () =>
          page
            .locator('#cases-body tr')
            .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-case-id'))),
        SLOW,
      )
      .toEqual(byEpss.data.map((c) => c.id));
    expect(await page.locator('#cases-body tr td[data-label="EPSS"]').textContent()).toBe('42.0%');
  });

  it('changes the status of the selected cases with a note that lands in each case history', async () => {
    await page.goto('/cases?severity=CRITICAL,HIGH,LOW');
    await expect.poll(() => page.locator('#cases-body tr').count(), SLOW).toBe(3);
    await page.locator('#select-all').check();
    await page.locator('#bulk summary').click();
    await expect
      .poll(() => page.locator('#scope-selected').textContent(), SLOW)
      .toBe('The selected cases (3)');
    await page.getByLabel('New status').selectOption('risk_accepted');
    const note = `Accepted until the Q3 rebuild ${XSS}`;
    await page.getByLabel(/^Note/).fill(note);
    await page.getByRole('button', { name: 'Change status' }).click();
    await expect.poll(() => page.locator('#page-notice').textContent(), SLOW).toContain('on 3 cases');
    const ids = await page
      .locator('#cases-body tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-case-id')));
    for (const id of ids) {
      const c = await api<ApiCase>(`/api/v1/cases/${id}`);
      expect(c.status).toBe('risk_accepted');
      // The page chose an expiry (90 days ahead unless changed) and sent it with the note.
      expect(c.acceptance).toEqual({ expiresAt: expect.stringMatching(/T23:59:59\.000Z$/), note });
      expect(c.history!.at(-1)).toMatchObject({
        to: 'risk_accepted',
        note,
        actor: expect.stringMatching(/^user:/),
      });
    }
    await page.locator(`#cases-body tr[data-case-id="${ids[0]}"] .case-title`).click();
    await expect.poll(() => page.locator('#history li').count(), SLOW).toBe(1);
    expect(await page.locator('#history .note').textContent()).toBe(note);
    expect(await xssRan()).toBeUndefined();
  });

  it('assigns and tags the selected cases, shows owner and tags in the list and on the case page, refuses a stranger', async () => {
    await page.goto('/cases?severity=CRITICAL,HIGH');
    await expect.poll(() => page.locator('#cases-body tr').count(), SLOW).toBe(2);
    await page.locator('#select-all').check();
    await page.locator('#bulk summary').click();
    await page.locator('#bulk-owner-assignee').fill('stranger@elsewhere.test');
    await page.getByRole('button', { name: 'Set owner and tags' }).click();
    await expect
      .poll(() => page.locator('#page-error').textContent(), SLOW)
      .toBe('assignee must be the email of a member of the workspace.');

    await page.locator('#bulk-owner-assignee').fill(ownerEmail);
    await page.locator('#bulk-owner-add-tags').fill(`pci, sprint-7`);
    await page.getByRole('button', { name: 'Set owner and tags' }).click();
    await expect.poll(() => page.locator('#page-notice').textContent(), SLOW).toContain('on 2 cases');
    const rows = page.locator('#cases-body tr');
    await expect
      .poll(() => rows.locator('td[data-label="Owner"]').allTextContents(), SLOW)
      .toEqual([ownerEmail.toLowerCase(), ownerEmail.toLowerCase()]);
    expect(await rows.first().locator('.tag').allTextContents()).toEqual(['pci', 'sprint-7']);
    const ids = await rows.evaluateAll((trs) => trs.map((r) => r.getAttribute('data-case-id')));
    for (const id of ids) {
      expect(await api<ApiCase>(`/api/v1/cases/${id}`)).toMatchObject({
        assignee: ownerEmail.toLowerCase(),
        tags: ['pci', 'sprint-7'],
      });
    }
    await screenshot(page, 'console-cases-owner');

    // The filters find them; the case page shows them and takes a tag off.
    await page.goto('/cases?tag=sprint-7');
    await expect.poll(() => rows.count(), SLOW).toBe(2);
    await page.goto(`/cases/${ids[0]}`);
    await expect.poll(() => page.locator('#case-owner').textContent(), SLOW).toBe(ownerEmail.toLowerCase());
    await page.locator('#case-owner-remove-tags').fill('pci');
    await page.getByRole('button', { name: 'Save owner and tags' }).click();
    await expect.poll(() => page.locator('#case-tags .tag').allTextContents(), SLOW).toEqual(['sprint-7']);
    // The day its acceptance ends.
    expect(await page.locator('#case-acceptance').textContent()).toMatch(/\d{4}/);
    expect(await xssRan()).toBeUndefined();
  });

  it('exports the filtered cases: a direct download, and a job with progress then a link', async () => {
    // Two cases: at the direct limit, streamed at once.
    await page.goto('/cases?severity=CRITICAL,HIGH');
    await expect.poll(() => page.locator('#count-total').textContent(), SLOW).toBe('2');
    await page.locator('#bulk summary').click();
    await page.getByLabel(/Export the cases/).selectOption('csv');
    const [direct] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export' }).click(),
    ]);
    const csv = readFileSync((await direct.path())!, 'utf8');
    const lines = csv.trim().split(/\r?\n/);
    expect(lines.length).toBe(3);
    expect(lines[0]).toContain('title');

    // Four cases: past the limit, so a job; its link downloads JSON Lines.
    await page.goto('/cases');
    await expect.poll(() => page.locator('#count-total').textContent(), SLOW).toBe('4');
    await page.locator('#bulk summary').click();
    await page.getByLabel(/Export the cases/).selectOption('jsonl');
    await page.getByRole('button', { name: 'Export' }).click();
    await expect.poll(() => page.locator('#export-link').isVisible(), PARSE).toBe(true);
    expect(await page.locator('#export-status').textContent()).toContain('Export ready: 4 cases');
    const [job] = await Promise.all([page.waitForEvent('download'), page.locator('#export-link').click()]);
    const rows = readFileSync((await job.path())!, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string });
    expect(rows.map((r) => r.id).sort()).toEqual([...caseIds].sort());
    await screenshot(page, 'console-cases');
  });

  it('shows the dashboard after sign-in: open cases by severity, KEV open, new cases per day', async () => {
    const res = await page.goto('/');
    expectStrictPageHeaders(res);
    expect(await page.locator('#open-total').textContent()).toBe('1');
    expect(await page.locator('#kev-open').textContent()).toBe('0');
    expect(await page.locator('svg.chart rect.bar').count()).toBe(30);
    expect(await page.locator('#new-cases-table tbody tr').last().locator('td').textContent()).toBe('4');
    expect(await page.locator('#ai-calls').textContent()).toBe('0');
    await screenshot(page, 'console-dashboard');
    expect(session.scriptProblems).toEqual([]);
  });

  it('triages from the Cases page after showing the AI calls it uses and what remains, and bills the workspace', async () => {
    await page.goto('/cases?severity=CRITICAL,HIGH');
    await expect.poll(() => page.locator('#count-total').textContent(), SLOW).toBe('2');
    await page.locator('#bulk summary').click();
    await page.getByRole('radio', { name: /Every case matching the filters/ }).check();
    await expect.poll(() => page.locator('#triage-key option').count(), SLOW).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Triage with AI…' }).click();
    await expect
      .poll(() => page.locator('#triage-summary').textContent(), SLOW)
      .toMatch(/^This triages 2 of 2 cases: 2 AI calls\. This month: ([\d,]+) of \1 AI calls left; /);
    await page.getByRole('button', { name: 'Triage 2 cases' }).click();
    await expect
      .poll(() => page.locator('#triage-status').textContent(), SLOW)
      .toContain('AI triage started for 2 cases');
    const billed = async () =>
      (await page.evaluate("fetch('/api/console/statement').then((r) => r.json())")) as {
        totals: { aiCalls: number };
      };
    await expect.poll(async () => (await billed()).totals.aiCalls, PARSE).toBe(2);

    // One case from its own page: the answer shows at once, one more AI call billed.
    await page.goto('/cases?severity=MEDIUM');
    await page.locator('#cases-body .case-title').first().click();
    await expect.poll(() => page.locator('#triage-none').isVisible(), SLOW).toBe(true);
    await expect.poll(() => page.locator('#triage-key option').count(), SLOW).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Triage now (1 AI call)' }).click();
    await expect.poll(() => page.locator('#triage-now').isVisible(), PARSE).toBe(true);
    expect(await page.locator('#triage-priority').textContent()).toMatch(/^(Critical|High|Medium|Low|Info)$/);
    expect((await billed()).totals.aiCalls).toBe(3);
    expect(await xssRan()).toBeUndefined();
    await screenshot(page, 'console-case-triaged');
  });

  it('filters by triage priority, sorts, and counts per priority exactly as the API lists', async () => {
    const triaged = await api<{ data: (ApiCase & { triage: { priority: string } | null })[] }>(
      '/api/v1/cases?triaged=true',
    );
    expect(triaged.data).toHaveLength(3);
    const priority = triaged.data[0]!.triage!.priority;
    await page.goto('/cases');
    await expect.poll(() => page.locator('#cases-card').getAttribute('aria-busy'), SLOW).toBe('false');
    await expect
      .poll(() => page.locator(`#count-priority-${priority}`).textContent(), SLOW)
      .toBe(String(triaged.data.filter((c) => c.triage!.priority === priority).length));
    await page
      .getByRole('group', { name: 'Priority (AI triage)' })
      .getByRole('checkbox', { name: priority[0] + priority.slice(1).toLowerCase() })
      .check();
    await page.getByLabel('Sort by').selectOption('epss');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(`**/cases?priority=${priority}&sort=epss`);
    await expect.poll(() => page.locator('#cases-card').getAttribute('aria-busy'), SLOW).toBe('false');
    const listed = await api<{ data: ApiCase[] }>(`/api/v1/cases?priority=${priority}&sort=epss`);
    await expect
      .poll(
        () =>
          page
            .locator('#cases-body tr')
            .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-case-id'))),
        SLOW,
      )
      .toEqual(listed.data.map((c) => c.id));

    await page.locator('#count-priority-UNTRIAGED').click();
    await page.waitForURL(/triaged=false/);
    const untriaged = await api<{ data: ApiCase[] }>('/api/v1/cases?triaged=false');
    await expect
      .poll(
        () =>
          page
            .locator('#cases-body tr')
            .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-case-id'))),
        SLOW,
      )
      .toEqual(untriaged.data.map((c) => c.id));
    await screenshot(page, 'console-cases-priority');
  });

  it('is readable at 390 px', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [url, name] of [
      ['/', 'console-dashboard-phone'],
      ['/scans', 'console-scans-phone'],
      ['/cases', 'console-cases-phone'],
      [`/cases/${caseIds[0]}`, 'console-case-phone'],
    ] as const) {
      await page.goto(url);
      await page.waitForLoadState('networkidle');
      const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow, url).toBeLessThanOrEqual(0);
      await screenshot(page, name);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("answers 404 for another workspace's case, on the page and in the JSON", async () => {
    await page.goto(`/cases/${caseIds[0]}`);
    await expect.poll(() => page.locator('#case-card').getAttribute('aria-busy'), SLOW).toBe('false');
    await screenshot(page, 'console-case');

    const other = await session.browser.newContext({ baseURL: server.url });
    const otherPage = await other.newPage();
    await signUp(otherPage, 'Other Co');
    const res = await otherPage.goto(`/cases/${caseIds[0]}`);
    expect(res?.status()).toBe(404);
    expect(await otherPage.locator('#page-title').textContent()).toBe('No such case');
    const json = await otherPage.evaluate(
      (id) => fetch(`/api/console/cases/${id}`).then((r) => r.status),
      caseIds[0],
    );
    expect(json).toBe(404);
    const evidence = await otherPage.evaluate(
      (id) => fetch(`/api/console/cases/${id}/evidence`).then((r) => r.status),
      caseIds[0],
    );
    expect(evidence).toBe(404);
    await other.close();
  });
});
