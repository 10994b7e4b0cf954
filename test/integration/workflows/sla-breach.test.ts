import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUpWorkflowManager } from '../../helpers/test-app.js';
import { eventually, startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { DAY } from '../../helpers/clock.js';
import { startDeliveryWorker } from '../../../src/workers/delivery-worker.js';
import type { WorkerHandle } from '../../../src/jobs/queue-kit.js';
import { maintenanceRun } from '../../../src/app/workers.js';
import { announceSlaBreaches } from '../../../src/domain/workflows/sla-breaches.js';

/**
 * `case.sla_breached` (docs/workflows.md#when-deliveries-happen): the maintenance sweep tells a
 * generic webhook once per breach, however many sweeps run, at once or one after another; a due
 * date moved later and breached again is a new breach.
 */
let t: ScanTestApp;
let owner: Awaited<ReturnType<typeof signUpWorkflowManager>>;
let other: Awaited<ReturnType<typeof signUpWorkflowManager>>;
let receiver: Server;
let deliveries: WorkerHandle;
let secret: string;
let admin: { key: string };
const received: { headers: Record<string, string>; body: string }[] = [];
const start = Date.now();

const events = () =>
  received
    .map((r) => JSON.parse(r.body) as { type: string; data: { title: string; dueAt: string | null } })
    .filter((e) => e.type === 'case.sla_breached');

async function upload(key: string, findings: object[]): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/pipeline/scan?format=cli',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify({ tool: { name: 'breach', version: '1' }, findings }),
  });
  expect(res.statusCode, res.body).toBe(202);
  await waitForScan(t.app, key, (res.json() as { scanId: string }).scanId);
}

async function breachRows(): Promise<{ title: string; n: number }[]> {
  const { rows } = await t.infra.pool.query<{ title: string; n: number }>(
    `SELECT c.title, count(*)::int AS n FROM workflow_deliveries d JOIN cases c ON c.id = d.case_id
      WHERE d.event = 'case.sla_breached' GROUP BY c.title ORDER BY c.title`,
  );
  return rows;
}

beforeAll(async () => {
  t = await startScanApp({
    env: { WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' },
  });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        headers: req.headers as Record<string, string>,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  owner = await signUpWorkflowManager(t.app, { plan: 'trial' });
  other = await signUpWorkflowManager(t.app, { plan: 'trial' });
  admin = await createKey(t.app, owner, ['keys:write'], 'sla admin');
  const wf = await t.app.inject({
    method: 'POST',
    url: '/api/v1/workflows',
    headers: { 'x-api-key': owner.key, 'content-type': 'application/json' },
    payload: JSON.stringify({
      name: 'breaches',
      target: { kind: 'webhook', url },
      rule: { severity: ['CRITICAL', 'HIGH'] },
    }),
  });
  expect(wf.statusCode, wf.body).toBe(201);
  secret = (wf.json() as { secret: string }).secret;
  deliveries = startDeliveryWorker(
    t.infra.queues,
    { ...t.deps.workflows.delivery, clock: () => new Date() },
    { logger: t.deps.logger, concurrency: 2, backoff: { baseMs: 50, maxMs: 400 } },
  );
  await upload(owner.key, [
    { title: 'critical', severity: 'critical', asset: 'h1', ruleId: 'R1' },
    { title: 'high', severity: 'high', asset: 'h1', ruleId: 'R2' },
    { title: 'low', severity: 'low', asset: 'h1', ruleId: 'R3' },
  ]);
  // Another workspace's breach is its own: no workflow of its, no delivery.
  await upload(other.key, [{ title: 'other critical', severity: 'critical', asset: 'h9', ruleId: 'R1' }]);
}, 60_000);
afterAll(async () => {
  await deliveries?.close();
  await new Promise((r) => receiver?.close(r));
  await t?.close();
});

describe('case.sla_breached', () => {
  it('is delivered once per breached case however many sweeps run, at once or in turn', async () => {
    t.clock.set(new Date(start + 6 * DAY));
    const sweep = maintenanceRun(t.deps.config, t.infra, t.deps);
    expect((await sweep()).slaBreaches).toBe(0);

    t.clock.set(new Date(start + 8 * DAY));
    const reports = await Promise.all([sweep(), sweep(), sweep()]);
    // The critical case of each workspace, claimed by exactly one of the three sweeps.
    expect(reports.map((r) => r.slaBreaches).reduce((a, b) => a + b, 0)).toBe(2);
    expect((await sweep()).slaBreaches).toBe(0);
    expect(await breachRows()).toEqual([{ title: 'critical', n: 1 }]);

    // The high case passes its 30 days; the low one its 180, but the rule does not match it.
    t.clock.set(new Date(start + 200 * DAY));
    await Promise.all([sweep(), sweep()]);
    await sweep();
    expect(await breachRows()).toEqual([
      { title: 'critical', n: 1 },
      { title: 'high', n: 1 },
    ]);
    expect(await eventually(async () => events().length === 2, 10_000)).toBe(true);
    const wh = new Webhook(secret);
    for (const r of received) wh.verify(r.body, r.headers);
    expect(
      events()
        .map((e) => e.data.title)
        .sort(),
    ).toEqual(['critical', 'high']);
    expect(events().every((e) => e.data.dueAt !== null)).toBe(true);
  });

  it('announces a new breach when the due date moved later and passed again', async () => {
    const { rows } = await t.infra.pool.query<{ id: string }>(
      `SELECT id FROM cases WHERE workspace_id = $1 AND title = 'critical'`,
      [owner.workspaceId],
    );
    const put = await t.app.inject({
      method: 'PUT',
      url: '/api/v1/sla-policy',
      headers: { 'x-api-key': admin.key },
      payload: { days: { CRITICAL: 365, HIGH: 365, MEDIUM: 365, LOW: 365, INFO: null } },
    });
    expect(put.statusCode, put.body).toBe(200);
    const pool = { pool: t.infra.pool, enqueue: async () => {} };
    expect(await announceSlaBreaches(pool, new Date(start + 200 * DAY))).toEqual({
      breaches: 0,
      deliveries: 0,
    });
    expect(await announceSlaBreaches(pool, new Date(start + 366 * DAY))).toMatchObject({ breaches: 3 });
    expect(await announceSlaBreaches(pool, new Date(start + 367 * DAY))).toEqual({
      breaches: 0,
      deliveries: 0,
    });
    const { rows: n } = await t.infra.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM workflow_deliveries WHERE case_id = $1 AND event = 'case.sla_breached'`,
      [rows[0]!.id],
    );
    expect(n[0]!.n).toBe(2);
  });

  it('announces no new breach when a policy change moves a passed due date earlier', async () => {
    const put = await t.app.inject({
      method: 'PUT',
      url: '/api/v1/sla-policy',
      headers: { 'x-api-key': admin.key },
      payload: { days: { CRITICAL: 100, HIGH: 100, MEDIUM: 100, LOW: 100, INFO: null } },
    });
    expect(put.statusCode, put.body).toBe(200);
    const pool = { pool: t.infra.pool, enqueue: async () => {} };
    expect(await announceSlaBreaches(pool, new Date(start + 368 * DAY))).toEqual({
      breaches: 0,
      deliveries: 0,
    });
  });

  it('never announces a resolved case', async () => {
    await t.infra.pool.query(`UPDATE cases SET status = 'resolved', due_at = now() - interval '1 day'`);
    const pool = { pool: t.infra.pool, enqueue: async () => {} };
    expect(await announceSlaBreaches(pool, new Date(start + 999 * DAY))).toEqual({
      breaches: 0,
      deliveries: 0,
    });
  });
});
