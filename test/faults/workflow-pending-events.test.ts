import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpWorkflowManager } from '../helpers/test-app.js';
import { eventually, startScanApp, uploadScan, waitForScan, type ScanTestApp } from '../helpers/scan-app.js';
import { startDeliveryWorker } from '../../src/workers/delivery-worker.js';
import { DELIVERY_ATTEMPTS } from '../../src/domain/workflows/backoff.js';
import type { WorkerHandle } from '../../src/jobs/queue-kit.js';
import { casesChanged } from '../helpers/case-changes.js';

/**
 * A case with 20 pending events and a webhook answering 500: only the case's head is sent, by
 * its own job, so its attempts stay within the documented maximum and every request the target
 * gets is one of the head's attempts; the later events wait unsent, spending no attempt, and go
 * in order once the head is given up (docs/workflows.md#retries).
 */
const EVENTS = 20;
let t: ScanTestApp;
let deliveries: WorkerHandle;
let receiver: Server;
let url = '';
let answer = 500;
const received: string[] = [];

beforeAll(async () => {
  t = await startScanApp({
    env: { WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' },
  });
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(String(req.headers['webhook-id']));
      res.writeHead(answer).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;
  // Short backoff (50 ms doubling to 400 ms): the 32 attempts take seconds, not a day.
  deliveries = startDeliveryWorker(
    t.infra.queues,
    { ...t.deps.workflows.delivery, clock: () => new Date() },
    { logger: t.deps.logger, concurrency: 8, backoff: { baseMs: 50, maxMs: 400 } },
  );
});

afterAll(async () => {
  await deliveries?.close();
  await new Promise((r) => receiver?.close(r));
  await t?.close();
});

describe('a case with many pending events and a failing target', () => {
  it('sends only the head, within its attempt limit, and the rest in order after it', async () => {
    const session = await signUpWorkflowManager(t.app, { plan: 'trial' });
    const scan = JSON.stringify({
      tool: { name: 'ci' },
      findings: [{ title: 'Outdated library', severity: 'high', cveIds: ['CVE-2023-0286'], location: 'a:1' }],
    });
    const up = await uploadScan(t.app, session.key, scan, { 'content-type': 'application/json' });
    expect(up.statusCode).toBe(202);
    expect((await waitForScan(t.app, session.key, up.json().scanId)).status).toBe('completed');
    const cases = await t.app.inject({
      method: 'GET',
      url: '/api/v1/cases',
      headers: { 'x-api-key': session.key },
    });
    const caseId = cases.json().data[0].id as string;
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/workflows',
      headers: { 'x-api-key': session.key, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'hook', target: { kind: 'webhook', url } }),
    });
    expect(created.statusCode).toBe(201);
    const workflowId = created.json().id as string;
    for (let i = 0; i < EVENTS; i++)
      await casesChanged(
        t.infra.pool,
        t.deps.workflows.trigger,
        session.workspaceId,
        [caseId],
        'case.updated',
      );

    const rows = async () =>
      (
        await t.infra.pool.query<{ id: string; status: string; attempts: number }>(
          `SELECT id, status, attempts FROM workflow_deliveries WHERE workflow_id = $1 ORDER BY seq`,
          [workflowId],
        )
      ).rows;
    expect(await rows()).toHaveLength(EVENTS);
    const ids = (await rows()).map((r) => r.id);

    // The head is given up after its documented attempts; nothing else was sent meanwhile.
    expect(await eventually(async () => (await rows())[0]!.status === 'failed', 60_000)).toBe(true);
    const afterHead = await rows();
    expect(afterHead[0]).toEqual({ id: ids[0], status: 'failed', attempts: DELIVERY_ATTEMPTS });
    // The target's requests for the head are exactly its attempts; the only other request so
    // far may be the next head's (it goes once the head is given up); the ones behind it none.
    expect(received.filter((id) => id === ids[0])).toHaveLength(DELIVERY_ATTEMPTS);
    expect(received.slice(0, DELIVERY_ATTEMPTS)).toEqual(Array(DELIVERY_ATTEMPTS).fill(ids[0]));
    expect(received.every((id) => id === ids[0] || id === ids[1])).toBe(true);
    for (const r of afterHead.slice(2)) expect(r).toEqual({ id: r.id, status: 'pending', attempts: 0 });

    answer = 204;
    expect(await eventually(async () => (await rows()).every((r) => r.status !== 'pending'), 60_000)).toBe(
      true,
    );
    const final = await rows();
    expect(final.slice(1).every((r) => r.status === 'delivered')).toBe(true);
    // Every request was an attempt of the delivery it names, in the case's order.
    const attempts = final.reduce((n, r) => n + r.attempts, 0);
    expect(received).toHaveLength(attempts);
    const firstSeen = [...new Set(received)];
    expect(firstSeen).toEqual(ids);
  }, 180_000);
});
