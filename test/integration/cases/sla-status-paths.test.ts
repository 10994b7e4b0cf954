import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY } from '../../helpers/clock.js';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { runMaintenance } from '../../../src/domain/maintenance.js';

/*
 * Due dates across every way a status changes (docs/cases.md#due-dates-and-sla): the bulk status
 * route, a rescan's resolutions and reopenings, and an expired risk acceptance. A resolved case
 * keeps the due date it was resolved against and reads `met` or `missed`; a case that comes back
 * gets the due date of the policy in force.
 */

let t: ScanTestApp;
type Owner = Awaited<ReturnType<typeof signUp>>;
interface CaseView {
  id: string;
  title: string;
  status: string;
  firstSeen: string;
  dueAt: string | null;
  sla: string | null;
}

const api = (owner: Owner, method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: unknown) =>
  t.app.inject({
    method,
    url,
    headers: { 'x-api-key': owner.key },
    ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}),
  });

async function upload(owner: Owner, titles: string[], query = ''): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/pipeline/scan?format=cli${query}`,
    headers: { 'x-api-key': owner.key, 'content-type': 'application/json' },
    payload: JSON.stringify({
      tool: { name: 'sla-paths', version: '1' },
      findings: titles.map((title) => ({ title, severity: 'critical', ruleId: title })),
    }),
  });
  expect(res.statusCode, res.body).toBe(202);
  expect((await waitForScan(t.app, owner.key, (res.json() as { scanId: string }).scanId)).status).toBe(
    'completed',
  );
}

async function cases(owner: Owner): Promise<Record<string, CaseView & { days: number | null }>> {
  const res = await api(owner, 'GET', '/api/v1/cases?limit=100');
  expect(res.statusCode, res.body).toBe(200);
  const data = (res.json() as { data: CaseView[] }).data;
  return Object.fromEntries(
    data.map((c) => [
      c.title,
      {
        ...c,
        days: c.dueAt === null ? null : Math.round((Date.parse(c.dueAt) - Date.parse(c.firstSeen)) / DAY),
      },
    ]),
  );
}

/** Sets the workspace's policy, as its owner in the console, with `critical` days for CRITICAL cases. */
async function setCriticalDays(owner: Owner, critical: number): Promise<void> {
  const res = await t.app.inject({
    method: 'PUT',
    url: '/api/console/sla-policy',
    headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf },
    payload: { days: { CRITICAL: critical, HIGH: 30, MEDIUM: 90, LOW: 180, INFO: null } },
  });
  expect(res.statusCode, res.body).toBe(200);
}

beforeAll(async () => {
  t = await startScanApp();
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe('due dates across status changes', () => {
  it('bulk status: resolved cases keep their due date and read met; reopened ones take the policy in force', async () => {
    const owner = await signUp(t.app);
    await upload(owner, ['a', 'b', 'c']);
    const before = await cases(owner);
    expect(Object.values(before).map((c) => [c.days, c.sla])).toEqual([
      [7, 'on_track'],
      [7, 'on_track'],
      [7, 'on_track'],
    ]);

    const resolve = await api(owner, 'POST', '/api/v1/cases/status', {
      caseIds: [before.a!.id, before.b!.id],
      status: 'resolved',
      note: 'patched',
    });
    expect(resolve.statusCode, resolve.body).toBe(200);
    expect(resolve.json()).toEqual({ changed: 2, unchanged: 0, notFound: 0 });
    await setCriticalDays(owner, 3);
    const resolved = await cases(owner);
    expect([resolved.a, resolved.b, resolved.c].map((c) => [c!.status, c!.days, c!.sla])).toEqual([
      ['resolved', 7, 'met'],
      ['resolved', 7, 'met'],
      ['open', 3, 'on_track'],
    ]);

    const reopen = await api(owner, 'POST', '/api/v1/cases/status', {
      caseIds: [before.a!.id],
      status: 'in_progress',
      note: 'regressed',
    });
    expect(reopen.json()).toEqual({ changed: 1, unchanged: 0, notFound: 0 });
    const after = await cases(owner);
    expect([after.a, after.b].map((c) => [c!.status, c!.days, c!.sla])).toEqual([
      ['in_progress', 3, 'on_track'],
      ['resolved', 7, 'met'],
    ]);
  });

  it('rescans: a case resolved as not seen keeps its due date and reads met; seen again, it takes the policy in force', async () => {
    const owner = await signUp(t.app);
    await upload(owner, ['seen', 'gone'], '&asset=app-1');
    await upload(owner, ['seen'], '&asset=app-1');
    await setCriticalDays(owner, 2);
    const resolved = await cases(owner);
    expect([resolved.seen, resolved.gone].map((c) => [c!.status, c!.days, c!.sla])).toEqual([
      ['open', 2, 'on_track'],
      ['resolved', 7, 'met'],
    ]);

    await upload(owner, ['seen', 'gone'], '&asset=app-1');
    const reopened = await cases(owner);
    expect([reopened.seen, reopened.gone].map((c) => [c!.status, c!.days, c!.sla])).toEqual([
      ['open', 2, 'on_track'],
      ['open', 2, 'on_track'],
    ]);
  });

  it('an expired acceptance of a case resolved before reopens it with the due date of the policy in force', async () => {
    const owner = await signUp(t.app);
    await upload(owner, ['accepted']);
    const { accepted } = await cases(owner);
    expect(
      (await api(owner, 'PATCH', `/api/v1/cases/${accepted!.id}`, { status: 'resolved' })).statusCode,
    ).toBe(200);
    const expiresAt = new Date(t.clock().getTime() + 5 * DAY).toISOString();
    const accept = await api(owner, 'PATCH', `/api/v1/cases/${accepted!.id}`, {
      status: 'risk_accepted',
      note: 'compensating control',
      expiresAt,
    });
    expect(accept.statusCode, accept.body).toBe(200);
    await setCriticalDays(owner, 4);
    expect((await cases(owner)).accepted).toMatchObject({ status: 'risk_accepted', days: 4, sla: null });

    t.clock.advance(5 * DAY + 1000);
    const run = await runMaintenance({
      db: t.infra.pool,
      quota: t.deps.quota,
      bus: null,
      clock: t.clock,
      acceptances: { record: async () => new Map(), queue: async () => undefined },
    });
    expect(run.acceptancesExpired).toBe(1);
    expect((await cases(owner)).accepted).toMatchObject({ status: 'open', days: 4 });
  });
});
