import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, createKey, type TestApp } from '../../helpers/test-app.js';

/**
 * Every API route, hostile input: whatever goes wrong, the answer is a problem document
 * (docs/api.md#errors) with a 4xx status — never a stack trace, HTML, or a 500. The first test checks
 * that each listed route exists, so a renamed route cannot silently drop out of the sweep.
 */
let t: TestApp;
let session: Awaited<ReturnType<typeof signUp>>;
let admin: { id: string; key: string };
const ID = '00000000-0000-0000-0000-000000000000';

const API_ROUTES: { method: 'GET' | 'POST' | 'PATCH' | 'PUT'; url: string }[] = [
  { method: 'GET', url: '/api/v1/models' },
  { method: 'GET', url: '/api/v1/keys/me' },
  { method: 'GET', url: '/api/v1/usage' },
  { method: 'GET', url: '/api/v1/keys' },
  { method: 'POST', url: '/api/v1/keys' },
  { method: 'POST', url: `/api/v1/keys/${ID}/rotate` },
  { method: 'POST', url: `/api/v1/keys/${ID}/revoke` },
  { method: 'POST', url: '/api/v1/triage' },
  { method: 'POST', url: '/api/v1/triage/batch' },
  { method: 'GET', url: `/api/v1/triage/batch/${ID}` },
  { method: 'GET', url: '/api/v1/scans' },
  { method: 'GET', url: `/api/v1/scans/${ID}` },
  { method: 'GET', url: '/api/v1/findings' },
  { method: 'GET', url: `/api/v1/findings/${ID}` },
  { method: 'GET', url: '/api/v1/cases' },
  { method: 'GET', url: `/api/v1/cases/${ID}` },
  { method: 'GET', url: `/api/v1/cases/${ID}/evidence` },
  { method: 'PATCH', url: `/api/v1/cases/${ID}` },
  { method: 'POST', url: '/api/pipeline/scan' },
  { method: 'GET', url: `/api/pipeline/scan/${ID}` },
  { method: 'GET', url: '/api/v1/workflows' },
  { method: 'POST', url: '/api/v1/workflows' },
  { method: 'GET', url: `/api/v1/workflows/${ID}` },
  { method: 'PATCH', url: `/api/v1/workflows/${ID}` },
  { method: 'POST', url: `/api/v1/workflows/${ID}/test` },
  { method: 'GET', url: `/api/v1/workflows/${ID}/deliveries` },
  { method: 'GET', url: '/api/v1/sla-policy' },
  { method: 'PUT', url: '/api/v1/sla-policy' },
];
const CONSOLE_ROUTES: { method: 'GET' | 'POST' | 'PUT'; url: string }[] = [
  { method: 'POST', url: '/api/console/signup' },
  { method: 'POST', url: '/api/console/login' },
  { method: 'POST', url: '/api/console/logout' },
  { method: 'GET', url: '/api/console/session' },
  { method: 'GET', url: '/api/console/workspace' },
  { method: 'POST', url: '/api/console/plan' },
  { method: 'GET', url: '/api/console/statement' },
  { method: 'GET', url: '/api/console/keys' },
  { method: 'POST', url: '/api/console/keys' },
  { method: 'POST', url: `/api/console/keys/${ID}/rotate` },
  { method: 'POST', url: `/api/console/keys/${ID}/revoke` },
  { method: 'GET', url: '/api/console/reveal/nope' },
  { method: 'GET', url: '/api/console/scans' },
  { method: 'GET', url: `/api/console/scans/${ID}` },
  { method: 'POST', url: '/api/console/scans' },
  { method: 'GET', url: '/api/console/cases' },
  { method: 'GET', url: '/api/console/cases/counts' },
  { method: 'POST', url: '/api/console/cases/status' },
  { method: 'GET', url: `/api/console/cases/${ID}` },
  { method: 'GET', url: `/api/console/cases/${ID}/evidence` },
  { method: 'GET', url: '/api/console/exports/cases' },
  { method: 'POST', url: '/api/console/exports' },
  { method: 'GET', url: `/api/console/exports/${ID}` },
  { method: 'GET', url: '/api/console/dashboard' },
  { method: 'POST', url: '/api/console/cases/triage/preview' },
  { method: 'POST', url: '/api/console/cases/triage' },
  { method: 'POST', url: `/api/console/cases/${ID}/triage` },
  { method: 'GET', url: '/api/console/workflows' },
  { method: 'POST', url: '/api/console/workflows' },
  { method: 'POST', url: '/api/console/workflows/preview' },
  { method: 'GET', url: `/api/console/workflows/${ID}` },
  { method: 'POST', url: `/api/console/workflows/${ID}/test` },
  { method: 'GET', url: `/api/console/workflows/${ID}/deliveries` },
  { method: 'GET', url: '/api/console/sla-policy' },
  { method: 'PUT', url: '/api/console/sla-policy' },
  { method: 'GET', url: '/api/console/sso' },
  { method: 'PUT', url: '/api/console/sso' },
  { method: 'POST', url: '/api/console/sso/start' },
  { method: 'GET', url: '/api/console/sso/callback' },
];

beforeAll(async () => {
  t = await startTestApp();
  session = await signUp(t.app, { plan: 'trial' });
  admin = await createKey(
    t.app,
    session,
    [
      'keys:write',
      'triage:write',
      'scans:write',
      'scans:read',
      'cases:write',
      'usage:read',
      'workflows:write',
    ],
    'all',
  );
});
afterAll(async () => {
  await t.close();
});

function isProblem(res: { statusCode: number; headers: Record<string, unknown>; body: string }) {
  expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
  expect(res.statusCode, res.body).toBeLessThan(500);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  expect(body).toMatchObject({
    type: expect.stringMatching(/^https:\/\/docs\.vulntriage\.dev\/errors\//),
    code: expect.any(String),
    requestId: expect.any(String),
  });
  expect(res.body).not.toMatch(/\bat \S+\.(ts|js):\d+/);
}

describe('every route answers bad input with a problem document', () => {
  it('lists every API route it checks', () => {
    for (const r of [...API_ROUTES, ...CONSOLE_ROUTES]) {
      const url = r.url.replace(ID, ':id').replace('/nope', '/:token');
      expect(t.app.hasRoute({ method: r.method, url }), `${r.method} ${url}`).toBe(true);
    }
  });

  it.each(API_ROUTES)(
    '$method $url without a key, with a malformed key, and with a foreign id or garbage',
    async ({ method, url }) => {
      isProblem(await t.app.inject({ method, url }));
      isProblem(await t.app.inject({ method, url, headers: { 'x-api-key': 'svc_nope' } }));
      const h = { 'x-api-key': admin.key };
      // Malformed JSON, a hostile query and an unknown id, with a key that has every scope.
      const malformed = await t.app.inject({
        method,
        url: `${url}?limit=-1&cursor=%00%27`,
        headers: { ...h, 'content-type': 'application/json' },
        payload: method === 'GET' ? undefined : '{"a":',
      });
      isProblem(malformed);
      if (method !== 'GET') {
        isProblem(await t.app.inject({ method, url, headers: h, payload: { unknownField: '<script>' } }));
      }
    },
  );

  it.each(CONSOLE_ROUTES)(
    '$method $url without a session or CSRF token, and with garbage',
    async ({ method, url }) => {
      const anon = await t.app.inject({
        method,
        url,
        headers: { 'content-type': 'application/json' },
        payload: method === 'GET' ? undefined : '{"a":',
      });
      isProblem(anon);
      const h = { cookie: session.cookie };
      const noCsrf = await t.app.inject({
        method,
        url: `${url}?month=13`,
        headers: h,
        payload: method === 'GET' ? undefined : { x: 1 },
      });
      isProblem(noCsrf);
    },
  );

  // PostgreSQL cannot store U+0000 or a lone surrogate: every route must refuse them as a 400
  // naming the field, never fail with a 500 deep in a statement (a batch did, before the check
  // in app.ts).
  const NUL_BODY = {
    title: 'a\u0000b',
    severity: 'LOW',
    description: 'lone surrogate \ud800',
    label: 'l\u0000',
    name: 'n\u0000',
    items: [{ title: '\u0000', severity: 'LOW', description: 'x' }],
  };

  it.each(API_ROUTES)(
    '$method $url refuses U+0000 in the body or the query with a key that has every scope',
    async ({ method, url }) => {
      const h = { 'x-api-key': admin.key };
      // A scan upload's body is a file, not a request document (its NULs are the parser's and
      // the COPY encoder's business): there the query is the hostile part.
      const res = await t.app.inject(
        method === 'GET'
          ? { method, url: `${url}?name=a%00b`, headers: h }
          : url === '/api/pipeline/scan'
            ? {
                method,
                url: `${url}?name=a%00b`,
                headers: { ...h, 'content-type': 'application/json' },
                payload: '[]',
              }
            : { method, url, headers: h, payload: NUL_BODY },
      );
      isProblem(res);
      expect(res.statusCode, res.body).toBe(400);
    },
  );

  it.each(CONSOLE_ROUTES.filter((r) => r.method === 'POST'))(
    '$method $url refuses U+0000 with a session and its CSRF token',
    async ({ method, url }) => {
      const res = await t.app.inject({
        method,
        url,
        headers: { cookie: session.cookie, 'x-csrf-token': session.csrf },
        payload: {
          ...NUL_BODY,
          email: 'e\u0000@example.com',
          password: 'p\u0000'.padEnd(20, 'x'),
          workspaceName: 'w\u0000',
          plan: 'free',
          graceHours: 1,
        },
      });
      isProblem(res);
    },
  );
});
