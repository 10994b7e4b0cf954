/* eslint-disable @typescript-eslint/no-explicit-any -- assertions walk parsed JSON documents */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { problemDocument } from '../../helpers/problem.js';
import { DAY } from '../../helpers/clock.js';
import { runMaintenance } from '../../../src/domain/maintenance.js';

/**
 * Owner, tags and risk acceptance on cases (docs/cases.md#owner-and-tags,
 * docs/cases.md#risk-acceptance): PATCH, their filters, the rules refused as 422 problems, and
 * the expiry that reopens an accepted case, with the app's clock moved by hand.
 */
const findings = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    title: `${prefix}${i}`,
    severity: 'high',
    cveIds: [`CVE-2099-3000${i % 10}`],
    asset: `${prefix.toLowerCase()}-host-${i}`,
    ruleId: 'R1',
  }));

let t: ScanTestApp;
let owner: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;
let ids: string[];
let otherIds: string[];

const api = (
  method: 'GET' | 'PATCH' | 'POST' | 'DELETE',
  url: string,
  payload?: Record<string, unknown>,
  key = owner.key,
) =>
  t.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload !== undefined ? { payload } : {}) });
const inDays = (d: number) => new Date(t.clock().getTime() + d * DAY).toISOString();

async function upload(key: string, prefix: string, n: number): Promise<string[]> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/pipeline/scan?format=cli',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify({ tool: { name: 'owner-test', version: '1' }, findings: findings(prefix, n) }),
  });
  expect(res.statusCode, res.body).toBe(202);
  const scanId = (res.json() as { scanId: string }).scanId;
  expect((await waitForScan(t.app, key, scanId)).status).toBe('completed');
  const list = await api('GET', `/api/v1/cases?limit=200&scan=${scanId}`, undefined, key);
  return (list.json().data as { id: string; title: string }[])
    .sort((a, b) => Number(a.title.slice(prefix.length)) - Number(b.title.slice(prefix.length)))
    .map((c) => c.id);
}

beforeAll(async () => {
  t = await startScanApp();
  owner = await signUp(t.app, { email: 'Owner.One@Acme.test' });
  other = await signUp(t.app);
  ids = await upload(owner.key, 'O', 12);
  otherIds = await upload(other.key, 'X', 2);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

const refused = (errors: { path: string; message: string }[]) => ({
  ...problemDocument(
    422,
    'case_change_refused',
    'Case change refused',
    'The change breaks a rule of cases; see errors.',
  ),
  errors,
});

describe('owner and tags', () => {
  it('sets a member as assignee and tags (sorted, each once), and filters by them', async () => {
    const res = await api('PATCH', `/api/v1/cases/${ids[0]}`, {
      assignee: 'owner.one@acme.test',
      tags: ['pci', 'payments'],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'open',
      assignee: 'owner.one@acme.test',
      tags: ['payments', 'pci'],
    });
    // A status change alone leaves them as they are, and writes its history.
    const moved = await api('PATCH', `/api/v1/cases/${ids[0]}`, { status: 'in_progress', note: 'on it' });
    expect(moved.json()).toMatchObject({
      status: 'in_progress',
      assignee: 'owner.one@acme.test',
      tags: ['payments', 'pci'],
    });
    expect(moved.json().history).toEqual([
      {
        from: 'open',
        to: 'in_progress',
        actor: `key:${owner.keyId}`,
        reason: null,
        note: 'on it',
        at: expect.any(String),
      },
    ]);

    const list = async (q: string) =>
      ((await api('GET', `/api/v1/cases?limit=200${q}`)).json().data as { id: string }[]).map((c) => c.id);
    expect(await list('&assignee=OWNER.ONE@acme.test')).toEqual([ids[0]]);
    expect(await list('&tag=pci')).toEqual([ids[0]]);
    expect(await list('&tag=nope')).toEqual([]);
    expect(await list('&unassigned=false')).toEqual([ids[0]]);
    expect((await list('&unassigned=true')).sort()).toEqual(ids.slice(1).sort());
    // The findings list and the exports take the same filters.
    const findingsOf = await api('GET', '/api/v1/findings?tag=pci');
    expect(findingsOf.json().data.map((f: { caseId: string }) => f.caseId)).toEqual([ids[0]]);
    const csv = await api('GET', '/api/v1/exports/cases?format=csv&assignee=owner.one@acme.test');
    expect(csv.statusCode, csv.body).toBe(200);
    expect(csv.body).toContain('owner.one@acme.test,payments pci');

    const cleared = await api('PATCH', `/api/v1/cases/${ids[0]}`, { assignee: null, tags: [] });
    expect(cleared.json()).toMatchObject({ assignee: null, tags: [] });
  });

  it('refuses an assignee who is not a member of the workspace with a 422 problem', async () => {
    const res = await api('PATCH', `/api/v1/cases/${ids[1]}`, { assignee: 'stranger@elsewhere.test' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual(
      refused([{ path: '/assignee', message: 'must be the email of a member of the workspace' }]),
    );
    expect((await api('GET', `/api/v1/cases/${ids[1]}`)).json().assignee).toBeNull();
  });

  it('takes any email when the workspace has no console members', async () => {
    const lone = await signUp(t.app);
    const [caseId] = await upload(lone.key, 'L', 1);
    await t.infra.pool.query('DELETE FROM memberships WHERE workspace_id = $1', [lone.workspaceId]);
    const res = await api(
      'PATCH',
      `/api/v1/cases/${caseId}`,
      { assignee: 'Contractor@Vendor.test' },
      lone.key,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().assignee).toBe('contractor@vendor.test');
  });

  it.each([
    [
      'a hostile assignee',
      { assignee: '"><script>alert(1)</script>@x.test' },
      '/assignee',
      'must be an email address',
    ],
    ['an assignee with a space', { assignee: 'a b@x.test' }, '/assignee', 'must be an email address'],
    [
      'an oversized assignee',
      { assignee: `${'a'.repeat(250)}@x.test` },
      '/assignee',
      'must NOT have more than 254 characters',
    ],
    [
      'a tag that is no slug',
      { tags: ['Not A Slug'] },
      '/tags/0',
      'must be a short slug: lower-case letters, digits, dots, dashes and underscores, starting with a letter or digit',
    ],
    [
      'a tag over 32 characters',
      { tags: ['t'.repeat(33)] },
      '/tags/0',
      'must NOT have more than 32 characters',
    ],
    [
      '21 tags',
      { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
      '/tags',
      'must NOT have more than 20 items',
    ],
    [
      'a repeated tag',
      { tags: ['a', 'a'] },
      '/tags',
      'must NOT have duplicate items (items ## 1 and 0 are identical)',
    ],
    ['tags that are not a list', { tags: 'pci' }, '/tags', 'must be array'],
  ])('refuses %s with 400 and changes nothing', async (_name, payload, path, message) => {
    const res = await api('PATCH', `/api/v1/cases/${ids[2]}`, payload);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().code).toBe('invalid_request');
    expect(res.json().errors).toContainEqual({ path, message });
    expect((await api('GET', `/api/v1/cases/${ids[2]}`)).json()).toMatchObject({ assignee: null, tags: [] });
  });

  it('refuses an empty PATCH and an unknown field', async () => {
    expect((await api('PATCH', `/api/v1/cases/${ids[2]}`, {})).statusCode).toBe(400);
    expect((await api('PATCH', `/api/v1/cases/${ids[2]}`, { owner: 'x@y.test' })).statusCode).toBe(400);
  });

  it("answers 404 for another workspace's case and for a malformed id, changing nothing", async () => {
    const foreign = await api('PATCH', `/api/v1/cases/${otherIds[0]}`, { tags: ['mine'] });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(problemDocument(404, 'not_found', 'Not found', 'No such case.'));
    expect((await api('PATCH', '/api/v1/cases/not-a-uuid', { tags: ['mine'] })).statusCode).toBe(404);
    expect((await api('GET', `/api/v1/cases/${otherIds[0]}`, undefined, other.key)).json().tags).toEqual([]);
  });
});

describe('risk acceptance', () => {
  it.each([
    ['without expiresAt', { note: 'ok' }, [{ path: '/expiresAt', message: 'is required to accept a risk' }]],
    ['without a note', { expiresAt: 'IN30' }, [{ path: '/note', message: 'is required to accept a risk' }]],
    [
      'with a blank note',
      { note: '   ', expiresAt: 'IN30' },
      [{ path: '/note', message: 'is required to accept a risk' }],
    ],
    [
      'expiring in the past',
      { note: 'ok', expiresAt: 'AGO1' },
      [{ path: '/expiresAt', message: 'must be in the future' }],
    ],
    [
      'expiring past the longest acceptance',
      { note: 'ok', expiresAt: 'IN366' },
      [
        {
          path: '/expiresAt',
          message: "must be at most 365 days from now (the workspace's longest risk acceptance)",
        },
      ],
    ],
  ])('refuses risk_accepted %s with a 422 problem', async (_name, body: Record<string, string>, errors) => {
    const when = { IN30: inDays(30), AGO1: inDays(-1), IN366: inDays(366) } as Record<string, string>;
    const payload = {
      status: 'risk_accepted',
      ...body,
      ...(body.expiresAt ? { expiresAt: when[body.expiresAt] } : {}),
    };
    const res = await api('PATCH', `/api/v1/cases/${ids[3]}`, payload);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json()).toEqual(refused(errors));
    expect((await api('GET', `/api/v1/cases/${ids[3]}`)).json()).toMatchObject({
      status: 'open',
      acceptance: null,
    });
  });

  it('refuses expiresAt with another status, and a malformed one with 400', async () => {
    const other = await api('PATCH', `/api/v1/cases/${ids[3]}`, {
      status: 'in_progress',
      expiresAt: inDays(5),
    });
    expect(other.json()).toEqual(
      refused([{ path: '/expiresAt', message: 'is only taken with status risk_accepted' }]),
    );
    const bad = await api('PATCH', `/api/v1/cases/${ids[3]}`, {
      status: 'risk_accepted',
      note: 'x',
      expiresAt: 'next week',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual([
      { path: '/expiresAt', message: 'must be an ISO 8601 date-time with a time zone' },
    ]);
  });

  it('reopens an accepted case when its acceptance expires, once, by system, and tells the workflows', async () => {
    const expiresAt = inDays(10);
    const res = await api('PATCH', `/api/v1/cases/${ids[4]}`, {
      status: 'risk_accepted',
      note: 'WAF rule',
      expiresAt,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().acceptance).toEqual({ expiresAt, note: 'WAF rule' });
    // Another accepted case that expires later stays accepted.
    await api('PATCH', `/api/v1/cases/${ids[5]}`, {
      status: 'risk_accepted',
      note: 'later',
      expiresAt: inDays(20),
    });

    const told: [string, string[]][] = [];
    const run = () =>
      runMaintenance({
        db: t.infra.pool,
        quota: t.deps.quota,
        bus: null,
        clock: t.clock,
        acceptances: {
          record: async (_tx, ws, caseIds) => {
            told.push([ws, caseIds]);
            return new Map();
          },
          queue: async () => undefined,
        },
      });
    expect((await run()).acceptancesExpired).toBe(0);
    const start = t.clock();
    t.clock.advance(10 * DAY + 1000);
    // Two workers at once: each case reopens once, with one history entry.
    const [a, b] = await Promise.all([run(), run()]);
    expect(a.acceptancesExpired + b.acceptancesExpired).toBe(1);
    expect(told).toEqual([[owner.workspaceId, [ids[4]]]]);
    expect((await run()).acceptancesExpired).toBe(0);

    const reopened = (await api('GET', `/api/v1/cases/${ids[4]}`)).json();
    expect(reopened).toMatchObject({ status: 'open', acceptance: null });
    expect(reopened.history.at(-1)).toEqual({
      from: 'risk_accepted',
      to: 'open',
      actor: 'system',
      reason: 'acceptance_expired',
      note: null,
      at: expect.any(String),
    });
    expect((await api('GET', `/api/v1/cases/${ids[5]}`)).json().status).toBe('risk_accepted');
    // Back to today: the console session of the later tests lives by the same clock.
    t.clock.set(start);
  });

  it('moves the expiry when an accepted case is accepted again, and clears it when the case leaves risk_accepted', async () => {
    const first = inDays(5);
    await api('PATCH', `/api/v1/cases/${ids[6]}`, { status: 'risk_accepted', note: 'a', expiresAt: first });
    const renewed = await api('PATCH', `/api/v1/cases/${ids[6]}`, {
      status: 'risk_accepted',
      note: 'b',
      expiresAt: inDays(50),
    });
    expect(renewed.json().acceptance).toEqual({ expiresAt: inDays(50), note: 'b' });
    expect(renewed.json().history.map((h: any) => [h.from, h.to, h.note])).toEqual([
      ['open', 'risk_accepted', 'a'],
      ['risk_accepted', 'risk_accepted', 'b'],
    ]);
    const resolved = await api('PATCH', `/api/v1/cases/${ids[6]}`, { status: 'resolved' });
    expect(resolved.json()).toMatchObject({ status: 'resolved', acceptance: null });
  });
});

describe('POST /api/v1/cases/status', () => {
  it('changes cases by id with a cases:write key, counting unchanged and unknown ones', async () => {
    const writer = await createKey(t.app, owner, ['cases:write', 'scans:read'], 'bulk');
    const res = await api(
      'POST',
      '/api/v1/cases/status',
      { caseIds: [ids[7], ids[8], otherIds[0], 'nope'], status: 'false_positive', note: 'scanner noise' },
      writer.key,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ changed: 2, unchanged: 0, notFound: 2 });
    expect((await api('GET', `/api/v1/cases/${otherIds[0]}`, undefined, other.key)).json().status).toBe(
      'open',
    );
    const again = await api(
      'POST',
      '/api/v1/cases/status',
      { caseIds: [ids[7]], status: 'false_positive' },
      writer.key,
    );
    expect(again.json()).toEqual({ changed: 0, unchanged: 1, notFound: 0 });
  });

  it('changes the cases of a filter, and a risk acceptance takes its rules', async () => {
    const refusedBulk = await api('POST', '/api/v1/cases/status', {
      filter: { status: ['false_positive'] },
      status: 'risk_accepted',
      note: 'fine',
    });
    expect(refusedBulk.statusCode).toBe(422);
    expect(refusedBulk.json()).toEqual(
      refused([{ path: '/expiresAt', message: 'is required to accept a risk' }]),
    );
    const res = await api('POST', '/api/v1/cases/status', {
      filter: { status: ['false_positive'] },
      status: 'risk_accepted',
      note: 'fine',
      expiresAt: inDays(30),
    });
    expect(res.json()).toEqual({ changed: 2, unchanged: 0, notFound: 0 });
    const accepted = (await api('GET', '/api/v1/cases?status=risk_accepted&limit=200')).json().data;
    expect(accepted.map((c: any) => c.id)).toEqual(expect.arrayContaining([ids[7], ids[8]]));
  });

  it('refuses more than 1,000 ids, and a filter that matches more than 1,000 cases, changing nothing', async () => {
    const tooMany = Array.from(
      { length: 1001 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    const res = await api('POST', '/api/v1/cases/status', { caseIds: tooMany, status: 'resolved' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toContainEqual({
      path: '/caseIds',
      message: 'must NOT have more than 1000 items',
    });

    const big = await signUp(t.app);
    await upload(big.key, 'B', 1001);
    const over = await api('POST', '/api/v1/cases/status', { filter: {}, status: 'resolved' }, big.key);
    expect(over.statusCode).toBe(422);
    expect(over.json()).toEqual(
      refused([
        { path: '/filter', message: 'matches more than 1000 cases; narrow it or choose cases by id' },
      ]),
    );
    const open = await api('GET', '/api/v1/cases?status=resolved&limit=1', undefined, big.key);
    expect(open.json().data).toEqual([]);
  }, 120_000);

  it('needs cases:write, and refuses a body with both ids and a filter', async () => {
    const reader = await createKey(t.app, owner, ['scans:read'], 'reader');
    const res = await api(
      'POST',
      '/api/v1/cases/status',
      { caseIds: [ids[9]], status: 'resolved' },
      reader.key,
    );
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(
      problemDocument(
        403,
        'insufficient_scope',
        'Insufficient scope',
        'This route needs a key with the cases:write scope.',
      ),
    );
    const both = await api('POST', '/api/v1/cases/status', {
      caseIds: [ids[9]],
      filter: {},
      status: 'resolved',
    });
    expect(both.statusCode).toBe(400);
    expect((await api('GET', `/api/v1/cases/${ids[9]}`)).json().status).toBe('open');
  });
});

describe('POST /api/v1/cases/owner', () => {
  it('assigns and tags cases by id and by filter; ids of another workspace are not found', async () => {
    const res = await api('POST', '/api/v1/cases/owner', {
      caseIds: [ids[10], ids[11], otherIds[1]],
      assignee: 'owner.one@acme.test',
      addTags: ['sprint-7', 'pci'],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ updated: 2, tooManyTags: 0, notFound: 1 });
    expect((await api('GET', `/api/v1/cases/${otherIds[1]}`, undefined, other.key)).json()).toMatchObject({
      assignee: null,
      tags: [],
    });
    const byFilter = await api('POST', '/api/v1/cases/owner', {
      filter: { tag: 'sprint-7' },
      removeTags: ['pci'],
    });
    expect(byFilter.json()).toEqual({ updated: 2, tooManyTags: 0, notFound: 0 });
    expect((await api('GET', `/api/v1/cases/${ids[10]}`)).json()).toMatchObject({
      assignee: 'owner.one@acme.test',
      tags: ['sprint-7'],
    });
  });

  it('leaves whole a case the added tags would take past 20', async () => {
    const full = Array.from({ length: 20 }, (_, i) => `t${String(i).padStart(2, '0')}`);
    await api('PATCH', `/api/v1/cases/${ids[11]}`, { tags: full });
    const res = await api('POST', '/api/v1/cases/owner', {
      caseIds: [ids[10], ids[11]],
      addTags: ['one-more'],
    });
    expect(res.json()).toEqual({ updated: 1, tooManyTags: 1, notFound: 0 });
    expect((await api('GET', `/api/v1/cases/${ids[11]}`)).json().tags).toEqual(full);
  });

  it('refuses a non-member, a body with nothing to change, and hostile tags', async () => {
    const stranger = await api('POST', '/api/v1/cases/owner', {
      caseIds: [ids[10]],
      assignee: 'x@evil.test',
    });
    expect(stranger.json()).toEqual(
      refused([{ path: '/assignee', message: 'must be the email of a member of the workspace' }]),
    );
    expect((await api('POST', '/api/v1/cases/owner', { caseIds: [ids[10]] })).statusCode).toBe(400);
    const hostile = await api('POST', '/api/v1/cases/owner', {
      caseIds: [ids[10]],
      addTags: ['<img src=x>'],
    });
    expect(hostile.statusCode).toBe(400);
  });
});

describe('missing, malformed and oversized bodies on the new routes', () => {
  it.each([
    ['PATCH', (): string => `/api/v1/cases/${ids[0]}`, 16 * 1024],
    ['POST', (): string => '/api/v1/cases/status', 64 * 1024],
    ['POST', (): string => '/api/v1/cases/owner', 64 * 1024],
  ] as const)(
    '%s %s: 400 without a body or with malformed JSON, 413 past its limit',
    async (method, url, limit) => {
      const send = (payload: string) =>
        t.app.inject({
          method,
          url: url(),
          headers: { 'x-api-key': owner.key, 'content-type': 'application/json' },
          payload,
        });
      const missing = await api(method, url());
      expect(missing.statusCode).toBe(400);
      expect(missing.json().code).toBe('invalid_request');
      const malformed = await send('{"status": ');
      expect(malformed.statusCode).toBe(400);
      const oversized = await send(JSON.stringify({ note: 'x'.repeat(limit + 1) }));
      expect(oversized.statusCode).toBe(413);
      expect(oversized.json().code).toBe('payload_too_large');
    },
  );
});
