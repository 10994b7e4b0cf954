import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page, type Response } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

/** Debian's Chromium; CI installs the same package (`apt-get install -y chromium`). */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM_PATH);

/** Says plainly, once per file, that `file`'s browser tests did not run (no Chromium here). */
export function warnWithoutChromium(file: string, what = 'the console browser tests'): void {
  if (hasChromium) return;
  console.warn(
    `[e2e] SKIPPED: ${what} need Chromium at ${CHROMIUM_PATH} ` +
      `(Debian: apt-get install -y chromium). Nothing in test/e2e/${file} ran.`,
  );
}

export const KEY_SHAPE = /^svc_[0-9A-Za-z]{38}$/;

/** UI and cross-process changes are awaited, with room for a loaded CI machine. */
export const SLOW = { timeout: 10_000, interval: 50 };

export const SCREENSHOT_DIR = path.resolve('test-results', 'screenshots');

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A full-page PNG in test-results/screenshots/ (gitignored); copies for docs/ are made by hand. */
export async function screenshot(
  page: Page,
  name: string,
  options: { fullPage?: boolean } = {},
): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({
    path: file,
    fullPage: options.fullPage ?? true,
    animations: 'disabled',
    caret: 'hide',
  });
  return file;
}

/** The problem document an API answered with, minus the per-request id. */
export function withoutRequestId(body: unknown): Record<string, unknown> {
  const { requestId, ...rest } = body as Record<string, unknown>;
  if (typeof requestId !== 'string' || requestId.length === 0)
    throw new Error('problem document without a requestId');
  return rest;
}

/** The console page headers: strict CSP without inline script, no framing, no caching, no referrer. */
export function expectStrictPageHeaders(res: Response | null): void {
  const headers = res?.headers() ?? {};
  const csp = headers['content-security-policy'] ?? '';
  expect(csp).toContain("default-src 'self'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('unsafe-eval');
  expect(headers['cache-control']).toBe('no-store');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['referrer-policy']).toBe('no-referrer');
}

export interface BrowserSession {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Uncaught script errors and CSP violations the page reported. */
  scriptProblems: string[];
}

/** Chromium with one 1280x800 page on `baseURL`, clipboard allowed, script problems collected. */
export async function openBrowser(baseURL: string): Promise<BrowserSession> {
  const browser = await launchChromium();
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    baseURL,
    locale: 'en-GB',
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  const page = await context.newPage();
  const scriptProblems: string[] = [];
  page.on('pageerror', (err) => scriptProblems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text()))
      scriptProblems.push(msg.text());
  });
  return { browser, context, page, scriptProblems };
}

/** The browser's cookies as a Cookie header, for plain fetches made "as" the signed-in person. */
export async function cookieHeader(context: BrowserContext): Promise<string> {
  return (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
}

export async function keysMe(
  baseURL: string,
  key: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${baseURL}/api/v1/keys/me`, { headers: { 'X-API-Key': key } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The password the console suites' people sign up with. */
export const E2E_PASSWORD = 'correct horse battery staple';

/** The real service, Chromium on it, and the owner of a new Free workspace signed in there. */
export interface SignedInConsole extends BrowserSession {
  server: TestServer;
  /** The owner's address; their password is {@link E2E_PASSWORD}. */
  email: string;
  workspaceId: string;
  /** The owner's session's CSRF token, for calls made with `page.request`. */
  csrf: string;
  /** Closes the browser, then the service. */
  close(): Promise<void>;
}

/**
 * The set-up the console suites share: a real service (with `server` options: a port chosen
 * beforehand, environment), Chromium at 1280x800 on it, and an owner signed up through the API
 * in that browser's cookie jar, so the first `page.goto` is signed in.
 */
export async function signedInConsole(o: {
  workspaceName: string;
  email?: string;
  server?: Parameters<typeof startTestServer>[0];
}): Promise<SignedInConsole> {
  const server = await startTestServer(o.server);
  let session: BrowserSession | undefined;
  try {
    session = await openBrowser(server.url);
    const email = o.email ?? `owner-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@e2e.test`;
    const signup = await session.page.request.post('/api/console/signup', {
      data: { email, password: E2E_PASSWORD, workspaceName: o.workspaceName, plan: 'free' },
    });
    if (signup.status() !== 201) throw new Error(`signup: ${signup.status()} ${await signup.text()}`);
    const body = (await signup.json()) as { workspace: { id: string }; csrfToken: string };
    const browser = session;
    return {
      ...browser,
      server,
      email,
      workspaceId: body.workspace.id,
      csrf: body.csrfToken,
      async close() {
        await browser.browser.close();
        await server.close();
      },
    };
  } catch (err) {
    await session?.browser.close();
    await server.close();
    throw err;
  }
}
