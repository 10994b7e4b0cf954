import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/test-app.js';
import { testRedisUrl } from '../../helpers/db.js';
import { problemDocument } from '../../helpers/problem.js';
import { SERVICE_QUEUES } from '../../../src/jobs/service-queues.js';

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('/admin/queues without ADMIN_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ redisUrl: testRedisUrl() || undefined });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is not mounted: 404, whatever the credentials', async () => {
    for (const headers of [{}, { authorization: basic('ops', ADMIN_TOKEN) }]) {
      const res = await t.app.inject({ method: 'GET', url: '/admin/queues', headers });
      expect(res.statusCode).toBe(404);
    }
  });
});

describe.runIf(testRedisUrl())('/admin/queues with ADMIN_TOKEN on Redis queues', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ redisUrl: testRedisUrl(), env: { ADMIN_TOKEN } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses the page and its API without the password, or with another one', async () => {
    for (const url of ['/admin/queues', '/admin/queues/api/queues']) {
      for (const headers of [
        {},
        { authorization: basic('ops', 'wrong') },
        { authorization: `Bearer ${ADMIN_TOKEN}` },
      ]) {
        const res = await t.app.inject({ method: 'GET', url, headers });
        expect(res.statusCode).toBe(401);
        expect(res.headers['www-authenticate']).toBe('Basic realm="queues", charset="UTF-8"');
        expect(res.json()).toEqual(
          problemDocument(
            401,
            'unauthenticated',
            'Not signed in',
            "The queue dashboard needs the operators' password (ADMIN_TOKEN).",
          ),
        );
      }
    }
  });

  it('shows every queue of the service with the password', async () => {
    const page = await t.app.inject({
      method: 'GET',
      url: '/admin/queues',
      headers: { authorization: basic('ops', ADMIN_TOKEN) },
    });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    // No third-party fonts, no inline styles: the page keeps a strict CSP (docs/operations.md#queue-dashboard).
    expect(page.body).not.toMatch(/fonts\.googleapis\.com|fonts\.gstatic\.com| style="|<style>/);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'self'.*style-src 'self' 'sha256-/);
    expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
    const api = await t.app.inject({
      method: 'GET',
      url: '/admin/queues/api/queues',
      headers: { authorization: basic('ops', ADMIN_TOKEN) },
    });
    expect(api.statusCode).toBe(200);
    const names = (api.json() as { queues: { name: string }[] }).queues.map((q) => q.name).sort();
    expect(names).toEqual([...SERVICE_QUEUES].sort());
    expect(names).toEqual(expect.arrayContaining(['exports', 'maintenance', 'scan-ingest', 'triage']));
  });
});

describe('/admin/queues with ADMIN_TOKEN on PostgreSQL queues', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { ADMIN_TOKEN } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is not mounted (Bull Board needs Redis): 404', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/admin/queues',
      headers: { authorization: basic('ops', ADMIN_TOKEN) },
    });
    expect(res.statusCode).toBe(404);
  });
});
