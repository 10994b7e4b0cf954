import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { problemDocument } from '../../helpers/problem.js';

/** `GET/PUT /api/v1/sla-policy` and the console's `/api/console/sla-policy` (docs/cases.md#due-dates-and-sla). */
let t: ScanTestApp;
let owner: Awaited<ReturnType<typeof signUp>>;
let admin: { key: string };
let other: Awaited<ReturnType<typeof signUp>>;
let otherAdmin: { key: string };

const DEFAULTS = {
  object: 'sla_policy',
  days: { CRITICAL: 7, HIGH: 30, MEDIUM: 90, LOW: 180, INFO: null },
  exposedDays: { CRITICAL: null, HIGH: null, MEDIUM: null, LOW: null, INFO: null },
  maxAcceptanceDays: 365,
  updatedAt: null,
};
const POLICY = {
  days: { CRITICAL: 3, HIGH: 14, MEDIUM: 60, LOW: 120, INFO: null },
  exposedDays: { CRITICAL: 1 },
  maxAcceptanceDays: 90,
};

const get = (key: string) =>
  t.app.inject({ method: 'GET', url: '/api/v1/sla-policy', headers: { 'x-api-key': key } });
const put = (key: string, payload: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'PUT',
    url: '/api/v1/sla-policy',
    headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
const invalid = (errors: { path: string; message: string }[]) => ({
  ...problemDocument(
    400,
    'invalid_request',
    'Invalid request',
    'The request has invalid fields; see errors.',
  ),
  errors,
});

beforeAll(async () => {
  t = await startScanApp();
  owner = await signUp(t.app);
  admin = await createKey(t.app, owner, ['keys:write'], 'sla admin');
  other = await signUp(t.app);
  otherAdmin = await createKey(t.app, other, ['keys:write'], 'other admin');
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe('the SLA policy routes', () => {
  it('answer the defaults until a workspace sets its own, and a PUT recomputes its open cases', async () => {
    expect((await get(admin.key)).json()).toEqual(DEFAULTS);
    const up = await t.app.inject({
      method: 'POST',
      url: '/api/pipeline/scan?format=cli',
      headers: { 'x-api-key': owner.key, 'content-type': 'application/json' },
      payload: JSON.stringify({
        tool: { name: 'sla', version: '1' },
        findings: [{ title: 'c', severity: 'critical', asset: 'h', ruleId: 'R' }],
      }),
    });
    await waitForScan(t.app, owner.key, (up.json() as { scanId: string }).scanId);

    const res = await put(admin.key, POLICY);
    expect(res.statusCode, res.body).toBe(200);
    const stored = {
      object: 'sla_policy',
      days: POLICY.days,
      exposedDays: { CRITICAL: 1, HIGH: null, MEDIUM: null, LOW: null, INFO: null },
      maxAcceptanceDays: 90,
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
    };
    expect(res.json()).toEqual({ ...stored, recomputed: 1 });
    expect((await get(admin.key)).json()).toEqual(stored);
    // The same policy again moves nothing.
    expect((await put(admin.key, POLICY)).json()).toMatchObject({ recomputed: 0 });
    const cases = await t.app.inject({
      method: 'GET',
      url: '/api/v1/cases',
      headers: { 'x-api-key': owner.key },
    });
    const [c] = (cases.json() as { data: { firstSeen: string; dueAt: string; sla: string }[] }).data;
    expect(Date.parse(c!.dueAt) - Date.parse(c!.firstSeen)).toBe(3 * 86_400_000);
    expect(c!.sla).toBe('on_track');
  });

  it('records each change, by key or console user, as an audit event with the old and new settings', async () => {
    const ws = await signUp(t.app);
    const wsAdmin = await createKey(t.app, ws, ['keys:write'], 'audited admin');
    const events = async () => {
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/v1/audit-events?action=sla_policy_change',
        headers: { 'x-api-key': wsAdmin.key },
      });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { data: { actor: string; details: unknown }[] }).data;
    };
    const settings = {
      days: POLICY.days,
      exposedDays: { CRITICAL: 1, HIGH: null, MEDIUM: null, LOW: null, INFO: null },
      maxAcceptanceDays: 90,
    };
    expect((await put(wsAdmin.key, POLICY)).statusCode).toBe(200);
    // The same policy again changes nothing and records nothing.
    expect((await put(wsAdmin.key, POLICY)).statusCode).toBe(200);
    const byConsole = await t.app.inject({
      method: 'PUT',
      url: '/api/console/sla-policy',
      headers: { cookie: ws.cookie, 'x-csrf-token': ws.csrf, 'user-agent': 'sla-test' },
      payload: { days: DEFAULTS.days },
    });
    expect(byConsole.statusCode, byConsole.body).toBe(200);
    const { object: _o, updatedAt: _u, ...defaults } = DEFAULTS;
    expect(await events()).toEqual([
      expect.objectContaining({
        action: 'sla_policy_change',
        actor: expect.stringMatching(/^user:/) as unknown,
        userAgent: 'sla-test',
        details: { from: settings, to: defaults, recomputed: 0 },
      }),
      expect.objectContaining({
        action: 'sla_policy_change',
        actor: `key:${wsAdmin.id}`,
        details: { from: defaults, to: settings, recomputed: 0 },
      }),
    ]);
    // Another workspace's log has none of them.
    const theirs = await t.app.inject({
      method: 'GET',
      url: '/api/v1/audit-events?action=sla_policy_change',
      headers: { 'x-api-key': otherAdmin.key },
    });
    expect((theirs.json() as { data: { actor: string }[] }).data.map((e) => e.actor)).not.toContain(
      `key:${wsAdmin.id}`,
    );
  });

  it("shows another workspace's key its own policy only", async () => {
    await put(admin.key, POLICY);
    expect((await get(otherAdmin.key)).json()).toEqual(DEFAULTS);
    await put(otherAdmin.key, { days: { CRITICAL: 1, HIGH: 2, MEDIUM: 3, LOW: 4, INFO: 5 } });
    expect((await get(admin.key)).json()).toMatchObject({ days: POLICY.days, maxAcceptanceDays: 90 });
    expect((await get(otherAdmin.key)).json()).toMatchObject({
      days: { CRITICAL: 1, HIGH: 2, MEDIUM: 3, LOW: 4, INFO: 5 },
      maxAcceptanceDays: 365,
    });
  });

  it('refuses a key without keys:write with 403 insufficient_scope, reading and writing', async () => {
    const scope = problemDocument(
      403,
      'insufficient_scope',
      'Insufficient scope',
      'This route needs a key with the keys:write scope.',
    );
    const r1 = await get(owner.key);
    expect(r1.statusCode).toBe(403);
    expect(r1.json()).toEqual(scope);
    const r2 = await put(owner.key, { days: { CRITICAL: 1, HIGH: 1, MEDIUM: 1, LOW: 1, INFO: 1 } });
    expect(r2.statusCode).toBe(403);
    expect(r2.json()).toEqual(scope);
    expect((await get(admin.key)).json()).toMatchObject({ days: POLICY.days });
  });

  it('refuses a missing or unknown key with 401', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/sla-policy' });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  });

  it.each([
    ['no body fields', {}, [{ path: '/days', message: 'is required' }]],
    [
      'a missing priority',
      { days: { CRITICAL: 1, HIGH: 2, MEDIUM: 3, LOW: 4 } },
      [{ path: '/days/INFO', message: 'is required' }],
    ],
    [
      'zero days',
      { days: { ...POLICY.days, CRITICAL: 0 } },
      [{ path: '/days/CRITICAL', message: 'must be >= 1' }],
    ],
    [
      'ten years and a day',
      { days: { ...POLICY.days, LOW: 3651 } },
      [{ path: '/days/LOW', message: 'must be <= 3650' }],
    ],
    [
      'days as text',
      { days: { ...POLICY.days, HIGH: '14' } },
      [{ path: '/days/HIGH', message: 'must be integer,null' }],
    ],
    [
      'fractional days',
      { days: { ...POLICY.days, HIGH: 1.5 } },
      [{ path: '/days/HIGH', message: 'must be integer,null' }],
    ],
    [
      'an unknown priority',
      { days: { ...POLICY.days, URGENT: 1 } },
      [{ path: '/days/URGENT', message: 'is not an allowed field' }],
    ],
    [
      'an unknown field',
      { ...POLICY, dueSoonPercent: 50 },
      [{ path: '/dueSoonPercent', message: 'is not an allowed field' }],
    ],
    [
      'a zero acceptance maximum',
      { ...POLICY, maxAcceptanceDays: 0 },
      [{ path: '/maxAcceptanceDays', message: 'must be >= 1' }],
    ],
    ['an array', [POLICY], [{ path: '/', message: 'must be object' }]],
  ])('refuses %s with the whole problem body and stores nothing', async (_name, body, errors) => {
    const res = await put(admin.key, body);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toEqual(invalid(errors));
    expect((await get(admin.key)).json()).toMatchObject({ days: POLICY.days, maxAcceptanceDays: 90 });
  });

  it('refuses a prototype-polluting key, malformed JSON, an oversized body and another media type', async () => {
    const proto = await put(admin.key, `{"days":${JSON.stringify(POLICY.days)},"__proto__":{"x":1}}`);
    expect(proto.statusCode).toBe(400);
    const malformed = await put(admin.key, '{"days":');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ status: 400, code: 'invalid_request' });
    const big = await put(admin.key, { ...POLICY, pad: 'x'.repeat(5000) });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ status: 413, code: 'payload_too_large' });
    const text = await put(admin.key, 'days=1', { 'content-type': 'text/plain' });
    expect(text.statusCode).toBe(415);
    expect(text.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect((await get(admin.key)).json()).toMatchObject({ days: POLICY.days, maxAcceptanceDays: 90 });
  });

  it("lets the console's owner read and replace it with the CSRF token, and not without", async () => {
    const session = { cookie: other.cookie, 'x-csrf-token': other.csrf };
    const read = await t.app.inject({
      method: 'GET',
      url: '/api/console/sla-policy',
      headers: { cookie: other.cookie },
    });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ days: { CRITICAL: 1, HIGH: 2 } });
    const noCsrf = await t.app.inject({
      method: 'PUT',
      url: '/api/console/sla-policy',
      headers: { cookie: other.cookie },
      payload: { days: DEFAULTS.days },
    });
    expect(noCsrf.statusCode).toBe(403);
    const ok = await t.app.inject({
      method: 'PUT',
      url: '/api/console/sla-policy',
      headers: session,
      payload: { days: DEFAULTS.days, maxAcceptanceDays: 30 },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await get(otherAdmin.key)).json()).toMatchObject({ days: DEFAULTS.days, maxAcceptanceDays: 30 });
    expect((await get(admin.key)).json()).toMatchObject({ days: POLICY.days });
  });
});
