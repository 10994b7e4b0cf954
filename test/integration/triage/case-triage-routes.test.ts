import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUp } from '../../helpers/test-app.js';
import { queueBackends } from '../../helpers/db.js';
import { problemDocument } from '../../helpers/problem.js';
import { startScanApp, uploadScan, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { pollBatch, startTriageTestWorker } from '../../helpers/triage-setup.js';

/**
 * `POST /api/v1/cases/triage` and `POST /api/v1/cases/:id/triage` (docs/cases.md#triage-on-a-case): happy paths on
 * both queue backends, then the refusals — scopes, another workspace's ids, malformed, oversized
 * and hostile bodies, and the upload option's own checks.
 */
const backends = queueBackends('triage/case-triage-routes');
const opened: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const o of opened.reverse()) await o.close();
});

const FINDINGS = [
  { title: 'Log4Shell', severity: 'CRITICAL', cveIds: ['CVE-2021-44228'], location: 'pom.xml:42' },
  { title: 'Outdated OpenSSL', severity: 'HIGH', cveIds: ['CVE-2022-3602'], location: 'Dockerfile:3' },
  {
    title: 'Weak TLS',
    severity: 'MEDIUM',
    cveIds: [],
    description: 'TLS 1.0 enabled',
    location: 'nginx.conf:9',
  },
  {
    title: '=cmd|calc',
    severity: 'LOW',
    cveIds: [],
    description: "'; DROP TABLE cases; --",
    location: 'a.ts:1',
  },
];
const BODY = Buffer.from(FINDINGS.map((f) => JSON.stringify(f)).join('\n'));

async function appWithCases(redisUrl: string | undefined) {
  const t = await startScanApp({ ...(redisUrl ? { redisUrl } : {}) });
  opened.push(t);
  opened.push(startTriageTestWorker(t, {}, 4));
  const s = await signUp(t.app, { plan: 'trial' });
  const up = await uploadScan(
    t.app,
    s.key,
    BODY,
    { 'content-type': 'application/x-ndjson' },
    '?asset=billing-api',
  );
  expect(up.statusCode, up.body).toBe(202);
  await waitForScan(t.app, s.key, up.json().scanId);
  const { rows } = await t.infra.pool.query<{ id: string; title: string }>(
    `SELECT id, title FROM cases WHERE workspace_id = $1 ORDER BY title`,
    [s.workspaceId],
  );
  return { t, s, cases: new Map(rows.map((r) => [r.title, r.id])), scanId: up.json().scanId as string };
}

function post(
  t: ScanTestApp,
  key: string,
  url: string,
  payload?: unknown,
  headers: Record<string, string> = {},
) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { 'x-api-key': key, ...headers },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

describe.each(backends)('case triage routes on $name', ({ name, redisUrl }) => {
  it.skipIf(name === 'Redis' && !redisUrl)(
    'a batch by caseIds or by filters (202, statusUrl of the batch), and one case at once',
    async () => {
      const { t, s, cases } = await appWithCases(redisUrl);
      const byIds = await post(t, s.key, '/api/v1/cases/triage', {
        caseIds: [cases.get('Log4Shell'), cases.get('Weak TLS')],
      });
      expect(byIds.statusCode, byIds.body).toBe(202);
      const accepted = byIds.json();
      expect(accepted).toEqual({
        batchId: expect.any(String),
        status: 'queued',
        requested: 2,
        total: 2,
        skippedForQuota: 0,
        statusUrl: `/api/v1/triage/batch/${accepted.batchId}`,
      });
      expect(byIds.headers.location).toBe(accepted.statusUrl);
      const done = await pollBatch(t, s.key, accepted.batchId);
      expect(done).toMatchObject({ status: 'completed', total: 2, completed: 2, failed: 0 });

      const detail = await t.infra.pool.query<{ title: string; priority: string | null }>(
        `SELECT title, priority FROM cases WHERE workspace_id = $1 ORDER BY title`,
        [s.workspaceId],
      );
      const triaged = detail.rows.filter((r) => r.priority !== null).map((r) => r.title);
      expect(triaged).toEqual(['Log4Shell', 'Weak TLS']);

      // The same filter vocabulary as GET /api/v1/cases.
      const byFilter = await post(t, s.key, '/api/v1/cases/triage', { severity: 'HIGH,LOW', status: 'open' });
      expect(byFilter.statusCode, byFilter.body).toBe(202);
      expect(byFilter.json()).toMatchObject({ requested: 2, total: 2, skippedForQuota: 0 });
      expect(await pollBatch(t, s.key, byFilter.json().batchId)).toMatchObject({ status: 'completed' });

      // Re-triage what went stale (the enrichment changed after the triage): exactly those cases.
      await t.infra.pool.query(`UPDATE cases SET triage_stale = true WHERE id = $1`, [cases.get('Weak TLS')]);
      const stale = await post(t, s.key, '/api/v1/cases/triage', { stale: true });
      expect(stale.statusCode, stale.body).toBe(202);
      expect(stale.json()).toMatchObject({ requested: 1, total: 1, skippedForQuota: 0 });
      expect(await pollBatch(t, s.key, stale.json().batchId)).toMatchObject({ status: 'completed' });
      const fresh = await t.infra.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM cases WHERE workspace_id = $1 AND triage_stale`,
        [s.workspaceId],
      );
      expect(fresh.rows[0]!.n).toBe(0);
      // Only the untriaged ones.
      const untriaged = await post(t, s.key, '/api/v1/cases/triage', { triaged: false });
      expect(untriaged.json()).toMatchObject({ requested: 0, batchId: null });

      // Nothing matches: nothing to do, no batch.
      const none = await post(t, s.key, '/api/v1/cases/triage', { cve: 'CVE-1999-0001' });
      expect(none.statusCode).toBe(200);
      expect(none.json()).toEqual({
        batchId: null,
        status: 'completed',
        requested: 0,
        total: 0,
        skippedForQuota: 0,
        statusUrl: null,
      });

      // One case, synchronously, answered like POST /api/v1/triage and stored as its triage.
      const one = await post(t, s.key, `/api/v1/cases/${cases.get('Log4Shell')}/triage`);
      expect(one.statusCode, one.body).toBe(200);
      expect(one.json()).toEqual({
        priority: expect.stringMatching(/CRITICAL|HIGH/),
        recommendedAction: expect.any(String),
        reasoning: expect.any(String),
        confidenceScore: expect.any(Number),
        severityOverride: null,
        model: expect.stringMatching(/^local:|^policy:/),
        triagedAt: expect.any(String),
        usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number) },
      });
      const history = await t.infra.pool.query<{ n: number; key_id: string }>(
        `SELECT count(*)::int AS n, min(key_id::text) AS key_id FROM case_triage_history WHERE case_id = $1`,
        [cases.get('Log4Shell')],
      );
      expect(history.rows[0]).toEqual({ n: 2, key_id: s.keyId });
      const current = await t.infra.pool.query<{ triaged_at: Date }>(
        `SELECT triaged_at FROM cases WHERE id = $1`,
        [cases.get('Log4Shell')],
      );
      expect(current.rows[0]!.triaged_at.toISOString()).toBe(one.json().triagedAt);
      const calls = await t.infra.pool.query<{ used: number; reserved: number }>(
        `SELECT used, reserved FROM ai_call_quota WHERE workspace_id = $1`,
        [s.workspaceId],
      );
      expect(calls.rows[0]).toEqual({ used: 6, reserved: 0 });
    },
    120_000,
  );
});

describe('case triage refusals', () => {
  let t: ScanTestApp;
  let s: Awaited<ReturnType<typeof signUp>>;
  let cases: Map<string, string>;
  let otherCase: string;

  beforeAll(async () => {
    ({ t, s, cases } = await appWithCases(undefined));
    const other = await signUp(t.app, { plan: 'trial', workspaceName: 'Other' });
    const up = await uploadScan(t.app, other.key, BODY, { 'content-type': 'application/x-ndjson' });
    await waitForScan(t.app, other.key, up.json().scanId);
    otherCase = (
      await t.infra.pool.query<{ id: string }>(`SELECT id FROM cases WHERE workspace_id = $1 LIMIT 1`, [
        other.workspaceId,
      ])
    ).rows[0]!.id;
  }, 60_000);

  it('needs cases:write and triage:write (403 names the missing scope)', async () => {
    const uploadOnly = await createKey(t.app, s, ['scans:write', 'scans:read'], 'ci');
    const noTriage = await createKey(t.app, s, ['cases:write', 'scans:read'], 'no-triage');
    const id = cases.get('Log4Shell')!;
    for (const key of [uploadOnly.key, noTriage.key]) {
      for (const url of ['/api/v1/cases/triage', `/api/v1/cases/${id}/triage`]) {
        const res = await post(t, key, url, url.endsWith('/cases/triage') ? { caseIds: [id] } : undefined);
        expect(res.statusCode).toBe(403);
        expect(res.json()).toEqual(
          problemDocument(
            403,
            'insufficient_scope',
            'Insufficient scope',
            `This route needs a key with the cases:write and triage:write scopes.`,
          ),
        );
      }
    }
    const noKey = await t.app.inject({ method: 'POST', url: `/api/v1/cases/${id}/triage` });
    expect(noKey.statusCode).toBe(401);
  });

  it("another workspace's case is 404 and its ids select nothing; unknown and malformed ids are 404", async () => {
    for (const id of [otherCase, '00000000-0000-4000-8000-000000000000', 'not-a-uuid', "1' OR '1'='1"]) {
      const res = await post(t, s.key, `/api/v1/cases/${encodeURIComponent(id)}/triage`);
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toEqual(problemDocument(404, 'not_found', 'Not found', 'No such case.'));
    }
    const res = await post(t, s.key, '/api/v1/cases/triage', { caseIds: [otherCase] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ batchId: null, requested: 0 });
    // The other workspace's case was not triaged by this one.
    const { rows } = await t.infra.pool.query(`SELECT triaged_at FROM cases WHERE id = $1`, [otherCase]);
    expect(rows[0].triaged_at).toBeNull();
  });

  it.each([
    { body: {}, path: '/', label: 'an empty selection' },
    { body: { caseIds: [] }, path: '/caseIds', label: 'no ids' },
    { body: { caseIds: 'x' }, path: '/caseIds', label: 'ids not a list' },
    { body: { severity: 'URGENT' }, path: '/severity', label: 'an unknown severity' },
    { body: { kev: 'yes' }, path: '/kev', label: 'a kev that is not a boolean' },
    { body: { model: 'gpt-4o' }, path: '/model', label: 'an unknown field' },
    { body: { caseIds: ['a', 'a'] }, path: '/caseIds', label: 'repeated ids' },
    {
      body: { caseIds: Array.from({ length: 1001 }, (_, i) => `id-${i}`) },
      path: '/caseIds',
      label: 'too many ids',
    },
    { body: { asset: 'a\u0000b' }, path: '/asset', label: 'a NUL character' },
  ])('400 for $label', async ({ body, path }) => {
    const res = await post(t, s.key, '/api/v1/cases/triage', body);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('400 for ids and filters together, naming each filter', async () => {
    const res = await post(t, s.key, '/api/v1/cases/triage', {
      caseIds: [cases.get('Log4Shell')],
      severity: 'HIGH',
      kev: true,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      ...problemDocument(
        400,
        'invalid_request',
        'Invalid request',
        'Select cases by caseIds or by filters, not both.',
      ),
      errors: [
        { path: '/severity', message: 'must not be given with caseIds' },
        { path: '/kev', message: 'must not be given with caseIds' },
      ],
    });
  });

  it('malformed JSON is 400, a body over 64 KiB 413, a non-JSON body 415', async () => {
    const bad = await post(t, s.key, '/api/v1/cases/triage', '{"caseIds": [', {
      'content-type': 'application/json',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_request');
    const big = await post(t, s.key, '/api/v1/cases/triage', { asset: 'x'.repeat(70 * 1024) });
    expect(big.statusCode).toBe(413);
    expect(big.json().code).toBe('payload_too_large');
    const text = await post(t, s.key, '/api/v1/cases/triage', 'caseIds=1', { 'content-type': 'text/plain' });
    expect(text.statusCode).toBe(415);
  });

  it('the upload option: an unknown value is 400; triage without triage:write is 403, and keeps no scan', async () => {
    const bogus = await uploadScan(
      t.app,
      s.key,
      BODY,
      { 'content-type': 'application/x-ndjson' },
      '?triage=some',
    );
    expect(bogus.statusCode).toBe(400);
    expect(bogus.json().errors).toEqual([
      {
        path: '/querystring/triage',
        message: 'must be one of none, new, all',
      },
    ]);
    const uploadOnly = await createKey(t.app, s, ['scans:write', 'scans:read'], 'ci-2');
    const before = await t.infra.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM scans WHERE workspace_id = $1`,
      [s.workspaceId],
    );
    const refused = await uploadScan(
      t.app,
      uploadOnly.key,
      BODY,
      { 'content-type': 'application/x-ndjson' },
      '?triage=new',
    );
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual(
      problemDocument(
        403,
        'insufficient_scope',
        'Insufficient scope',
        'Uploading with triage=new or triage=all needs a key with the triage:write scope.',
      ),
    );
    const after = await t.infra.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM scans WHERE workspace_id = $1`,
      [s.workspaceId],
    );
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
    // Without triage the same key uploads as before.
    const plain = await uploadScan(
      t.app,
      uploadOnly.key,
      BODY,
      { 'content-type': 'application/x-ndjson' },
      '?triage=none',
    );
    expect(plain.statusCode).toBe(202);
  });

  it('a month with no AI call left refuses a case batch with 429 and triages nothing', async () => {
    await t.infra.pool.query(
      `INSERT INTO ai_call_quota (workspace_id, month, used, reserved)
       VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 50000, 0)
       ON CONFLICT (workspace_id, month) DO UPDATE SET used = 50000`,
      [s.workspaceId],
    );
    const res = await post(t, s.key, '/api/v1/cases/triage', { status: 'open' });
    expect(res.statusCode).toBe(429);
    expect(res.json().code).toBe('monthly_limit_exceeded');
    const one = await post(t, s.key, `/api/v1/cases/${cases.get('Weak TLS')}/triage`);
    expect(one.statusCode).toBe(429);
    const { rows } = await t.infra.pool.query(
      `SELECT count(*)::int AS n FROM case_triage_history WHERE workspace_id = $1`,
      [s.workspaceId],
    );
    expect(rows[0].n).toBe(0);
  });
});
