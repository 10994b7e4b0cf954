import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logIn } from '../../helpers/members.js';
import { problemDocument } from '../../helpers/problem.js';
import { startSmtpServer } from '../../helpers/smtp.js';
import { signUp, startTestApp, TEST_PEPPER, type TestApp } from '../../helpers/test-app.js';

/** Password reset by email (docs/console.md#password-reset), sent to a real SMTP server. */
let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
const BASE = 'https://triage.example.com';
const NEW_PASSWORD = 'a brand new passphrase';

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestApp({
    env: { SMTP_URL: smtp.url, MAIL_FROM: 'ops@example.com', PUBLIC_BASE_URL: BASE },
  });
});

afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

let ip = 0;
/** Each call from its own address unless told, so only the per-account limit applies. */
function ask(email: string, remoteAddress = `10.0.0.${++ip}`) {
  return t.app.inject({
    method: 'POST',
    url: '/api/console/password-reset',
    payload: { email },
    remoteAddress,
    headers: { 'user-agent': 'reset-test/1.0' },
  });
}

function reset(token: string, password = NEW_PASSWORD) {
  return t.app.inject({
    method: 'POST',
    url: `/api/console/password-reset/${token}`,
    payload: { password },
    remoteAddress: `10.1.0.${++ip}`,
  });
}

const expired = problemDocument(
  410,
  'reset_expired',
  'Reset link expired',
  'This reset link was already used or is older than 30 minutes: ask for a new one.',
);

/** The token of the `index`th reset email to `email`. */
async function linkFor(email: string, index = 0): Promise<string> {
  const mail = await smtp.next(email, index);
  const links = mail.text.match(/https?:\/\/\S+/g) ?? [];
  expect(links).toHaveLength(1);
  expect(links[0]).toMatch(new RegExp(`^${BASE}/reset-password/[A-Za-z0-9_-]{40,}$`));
  return links[0]!.split('/').pop()!;
}

describe('password reset', () => {
  it('gives the same answer for an unknown address and emails only a known one', async () => {
    const user = await signUp(t.app);
    const unknown = await ask('nobody-here@example.com');
    const known = await ask(user.email);
    const shape = (r: typeof known) => ({
      status: r.statusCode,
      body: r.body,
      type: r.headers['content-type'],
      length: r.headers['content-length'],
    });
    expect(shape(unknown)).toEqual(shape(known));
    expect(known.statusCode).toBe(202);
    const mail = await smtp.next(user.email);
    expect(mail.to).toEqual([user.email]);
    expect(mail.subject).toBe('Reset your VulnTriage password');
    for (const secret of [user.key, user.csrf, user.cookie.split('=')[1]!, user.password, TEST_PEPPER]) {
      expect(mail.raw).not.toContain(secret);
    }
    expect(smtp.messages.filter((m) => m.to.includes('nobody-here@example.com'))).toEqual([]);
  });

  it('sets the password once, ends every session, and the old password stops working', async () => {
    const user = await signUp(t.app);
    const second = await logIn(t.app, user.email, user.password);
    expect((await ask(user.email)).statusCode).toBe(202);
    const token = await linkFor(user.email);
    const done = await reset(token);
    expect(done.statusCode).toBe(204);
    for (const s of [user, second]) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/console/session',
        headers: { cookie: s.cookie },
      });
      expect(res.statusCode).toBe(401);
    }
    await expect(logIn(t.app, user.email, user.password)).rejects.toThrow(/401/);
    await logIn(t.app, user.email, NEW_PASSWORD);
    const again = await reset(token, 'yet another passphrase');
    expect(again.statusCode).toBe(410);
    expect(again.json()).toEqual(expired);
  });

  it('refuses a link older than 30 minutes, and an unknown one, with 410', async () => {
    const user = await signUp(t.app);
    await ask(user.email);
    const token = await linkFor(user.email);
    t.clock.advance(30 * 60_000 + 1000);
    const late = await reset(token);
    expect(late.json()).toEqual(expired);
    expect((await reset('A'.repeat(43))).json()).toEqual(expired);
    t.clock.advance(-(30 * 60_000 + 1000));
    await logIn(t.app, user.email, user.password);
  });

  it('limits asks per account and per address (429), for known and unknown addresses alike', async () => {
    const user = await signUp(t.app);
    for (let i = 0; i < 3; i++) expect((await ask(user.email)).statusCode).toBe(202);
    const fourth = await ask(user.email.toUpperCase());
    expect(fourth.statusCode).toBe(429);
    expect(fourth.json()).toMatchObject({ code: 'rate_limited' });
    const from = '192.0.2.77';
    for (let i = 0; i < 10; i++) expect((await ask(`someone-${i}@example.com`, from)).statusCode).toBe(202);
    expect((await ask('someone-else@example.com', from)).statusCode).toBe(429);
  });

  it('audits the reset in the account’s workspace with address and user agent', async () => {
    const user = await signUp(t.app);
    await ask(user.email);
    await reset(await linkFor(user.email));
    const fresh = await logIn(t.app, user.email, NEW_PASSWORD);
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/console/audit-events',
      headers: { cookie: fresh.cookie },
    });
    const events = (
      res.json() as { data: { action: string; actor: string; ip: string; userAgent: string }[] }
    ).data;
    expect(events.find((e) => e.action === 'password_reset')).toMatchObject({
      actor: expect.stringMatching(/^user:/),
      ip: expect.stringMatching(/^10\.1\.0\./),
    });
    expect(events.find((e) => e.action === 'password_reset_request')).toMatchObject({
      actor: 'anonymous',
      userAgent: 'reset-test/1.0',
    });
  });

  it('answers hostile and oversized input with problem documents', async () => {
    const cases: [string, unknown, number][] = [
      ['/api/console/password-reset', { email: 'x' }, 400],
      ['/api/console/password-reset', { email: 'a@example.com', admin: true }, 400],
      ['/api/console/password-reset', { email: `${'a'.repeat(6000)}@example.com` }, 413],
      [`/api/console/password-reset/${'A'.repeat(43)}`, { password: 'short' }, 400],
      ['/api/console/password-reset/..%2F..', { password: NEW_PASSWORD }, 400],
    ];
    for (const [url, payload, status] of cases) {
      const res = await t.app.inject({
        method: 'POST',
        url,
        payload: payload as object,
        remoteAddress: '198.51.100.9',
      });
      expect({ url, status: res.statusCode }).toEqual({ url, status });
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });
});
