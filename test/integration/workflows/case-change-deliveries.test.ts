import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/lib/config.js';
import { maintenanceRun } from '../../../src/app/workers.js';
import { signUpWorkflowManager, TEST_PEPPER } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { DAY } from '../../helpers/clock.js';
import { cutAtOutbox as cutAtOutboxOf } from '../../helpers/outbox-cut.js';

/**
 * Workflow deliveries of case changes other than a scan's (docs/workflows.md#when-deliveries-happen):
 * an expired risk acceptance records its delivery with the reopening, so a crash after the
 * reopening loses no event; a change of owner or tags alone delivers `case.updated`, and a rule
 * may select cases by owner or tag.
 */
let t: ScanTestApp;
let owner: Awaited<ReturnType<typeof signUpWorkflowManager>>;
let ids: string[];
let workflowId: string;

const api = (
  method: 'GET' | 'PATCH' | 'POST' | 'DELETE',
  url: string,
  payload?: Record<string, unknown>,
  key = owner.key,
) =>
  t.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload !== undefined ? { payload } : {}) });
const inDays = (d: number) => new Date(t.clock().getTime() + d * DAY).toISOString();

async function upload(prefix: string, n: number): Promise<{ scanId: string; caseIds: string[] }> {
  const findings = Array.from({ length: n }, (_, i) => ({
    title: `${prefix}${i}`,
    severity: 'high',
    cveIds: [`CVE-2099-4100${i % 10}`],
    asset: `${prefix.toLowerCase()}-host-${i}`,
    ruleId: 'R1',
  }));
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/pipeline/scan?format=cli',
    headers: { 'x-api-key': owner.key, 'content-type': 'application/json' },
    payload: JSON.stringify({ tool: { name: 'loop-test', version: '1' }, findings }),
  });
  expect(res.statusCode, res.body).toBe(202);
  const scanId = (res.json() as { scanId: string }).scanId;
  expect((await waitForScan(t.app, owner.key, scanId)).status).toBe('completed');
  const list = await api('GET', `/api/v1/cases?limit=200&scan=${scanId}`);
  const caseIds = (list.json().data as { id: string; title: string }[])
    .sort((a, b) => Number(a.title.slice(prefix.length)) - Number(b.title.slice(prefix.length)))
    .map((c) => c.id);
  return { scanId, caseIds };
}

async function deliveriesOf(caseId: string, workflow = workflowId): Promise<{ event: string }[]> {
  const { rows } = await t.infra.pool.query<{ event: string }>(
    `SELECT event FROM workflow_deliveries WHERE workflow_id = $1 AND case_id = $2 ORDER BY seq`,
    [workflow, caseId],
  );
  return rows;
}

const cutAtOutbox = (act: () => Promise<unknown>) => cutAtOutboxOf(t.infra.pool, act);

beforeAll(async () => {
  t = await startScanApp();
  owner = await signUpWorkflowManager(t.app, { email: 'loop.owner@acme.test' });
  ({ caseIds: ids } = await upload('L', 9));
  const wf = await api('POST', '/api/v1/workflows', {
    name: 'all',
    target: { kind: 'webhook', url: 'https://hooks.acme.test/loop' },
  });
  expect(wf.statusCode, wf.body).toBe(201);
  workflowId = wf.json().id;
}, 120_000);

afterAll(async () => {
  await t?.close();
});

describe('an expired risk acceptance', () => {
  it('records its case.status_changed delivery with the reopening: a crash before the delivery loses no event', async () => {
    const caseId = ids[0]!;
    const accepted = await api('PATCH', `/api/v1/cases/${caseId}`, {
      status: 'risk_accepted',
      note: 'WAF rule',
      expiresAt: inDays(3),
    });
    expect(accepted.statusCode, accepted.body).toBe(200);
    const before = (await deliveriesOf(caseId)).length;
    const config = loadConfig({
      DATABASE_URL: t.databaseUrl,
      KEY_PEPPER: TEST_PEPPER,
      REDIS_URL: '',
      PORT: '0',
      LOG_LEVEL: 'silent',
    });
    const run = maintenanceRun(config, t.infra, t.deps);
    const start = t.clock();
    t.clock.advance(3 * DAY + 1000);

    // The run blocks on the held outbox, and its connection is cut there (a crash).
    await cutAtOutbox(run);
    await run();
    expect((await api('GET', `/api/v1/cases/${caseId}`)).json().status).toBe('open');
    const after = await deliveriesOf(caseId);
    expect(after.slice(before)).toEqual([{ event: 'case.status_changed' }]);
    t.clock.set(start);
  });
});

describe('a status change people make', () => {
  it('records its delivery with the change: a crash before the delivery loses no event', async () => {
    const caseId = ids[6]!;
    const before = (await deliveriesOf(caseId)).length;
    const res = (await cutAtOutbox(() =>
      api('PATCH', `/api/v1/cases/${caseId}`, { status: 'in_progress' }),
    )) as {
      statusCode: number;
    };
    const status = (await api('GET', `/api/v1/cases/${caseId}`)).json().status as string;
    // Stored only with its delivery: either both (the transaction retried after the cut) or neither.
    if (status === 'in_progress')
      expect((await deliveriesOf(caseId)).slice(before)).toEqual([{ event: 'case.status_changed' }]);
    else {
      expect(res.statusCode).toBe(503);
      expect((await deliveriesOf(caseId)).slice(before)).toEqual([]);
    }
  });

  it('POST /api/v1/cases/status records each delivery with its case: a crash loses none', async () => {
    const caseIds = [ids[7]!, ids[8]!];
    const before = await Promise.all(caseIds.map(async (id) => (await deliveriesOf(id)).length));
    await cutAtOutbox(() => api('POST', '/api/v1/cases/status', { caseIds, status: 'in_progress' }));
    for (const [i, id] of caseIds.entries()) {
      const status = (await api('GET', `/api/v1/cases/${id}`)).json().status as string;
      expect((await deliveriesOf(id)).slice(before[i]!)).toEqual(
        status === 'in_progress' ? [{ event: 'case.status_changed' }] : [],
      );
    }
  });
});

describe('owner and tags', () => {
  it('a PATCH of the owner or tags alone delivers case.updated, once per change', async () => {
    const caseId = ids[1]!;
    const before = (await deliveriesOf(caseId)).length;
    const set = await api('PATCH', `/api/v1/cases/${caseId}`, {
      assignee: 'loop.owner@acme.test',
      tags: ['pci'],
    });
    expect(set.statusCode, set.body).toBe(200);
    // The same values again change nothing, and deliver nothing.
    expect(
      (await api('PATCH', `/api/v1/cases/${caseId}`, { assignee: 'Loop.Owner@acme.test' })).statusCode,
    ).toBe(200);
    expect((await api('PATCH', `/api/v1/cases/${caseId}`, { tags: ['pci'] })).statusCode).toBe(200);
    expect((await deliveriesOf(caseId)).slice(before)).toEqual([{ event: 'case.updated' }]);
    // With a status change, the status change speaks for both.
    const both = await api('PATCH', `/api/v1/cases/${caseId}`, { status: 'in_progress', assignee: null });
    expect(both.statusCode, both.body).toBe(200);
    expect((await deliveriesOf(caseId)).slice(before)).toEqual([
      { event: 'case.updated' },
      { event: 'case.status_changed' },
    ]);
  });

  it('POST /api/v1/cases/owner delivers case.updated for each case it changed', async () => {
    const [a, b] = [ids[2]!, ids[3]!];
    await api('PATCH', `/api/v1/cases/${b}`, { assignee: 'loop.owner@acme.test' });
    const before = { a: (await deliveriesOf(a)).length, b: (await deliveriesOf(b)).length };
    const res = await api('POST', '/api/v1/cases/owner', {
      caseIds: [a, b],
      assignee: 'loop.owner@acme.test',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ updated: 2, tooManyTags: 0, notFound: 0 });
    expect((await deliveriesOf(a)).slice(before.a)).toEqual([{ event: 'case.updated' }]);
    expect((await deliveriesOf(b)).slice(before.b)).toEqual([]);
  });

  it('a rule on tag or assignee selects by them', async () => {
    const wf = await api('POST', '/api/v1/workflows', {
      name: 'pci',
      target: { kind: 'webhook', url: 'https://hooks.acme.test/pci' },
      rule: { tag: 'pci', assignee: 'loop.owner@acme.test' },
    });
    expect(wf.statusCode, wf.body).toBe(201);
    expect(wf.json().rule).toEqual({ tag: 'pci', assignee: 'loop.owner@acme.test' });
    const pci: string = wf.json().id;
    const [tagged, other] = [ids[4]!, ids[5]!];
    await api('PATCH', `/api/v1/cases/${tagged}`, { tags: ['pci'], assignee: 'loop.owner@acme.test' });
    await api('PATCH', `/api/v1/cases/${other}`, { tags: ['sox'], assignee: 'loop.owner@acme.test' });
    expect(await deliveriesOf(tagged, pci)).toEqual([{ event: 'case.updated' }]);
    expect(await deliveriesOf(other, pci)).toEqual([]);
    const bad = await api('POST', '/api/v1/workflows', {
      name: 'bad',
      target: { kind: 'webhook', url: 'https://hooks.acme.test/bad' },
      rule: { tag: 'Not A Tag' },
    });
    expect(bad.statusCode).toBe(400);
  });
});
