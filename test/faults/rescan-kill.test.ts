import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitForScan } from '../helpers/scan-app.js';
import { startOutboxKillRig, type OutboxKillRig } from '../helpers/outbox-kill.js';

/**
 * docs/ingestion.md#rescans: the resolutions of a rescan are part of its completion transaction.
 * A real worker process is killed (SIGKILL) while its completion has resolved the cases but not
 * committed (it waits on the workflow outbox, which the test holds): the scope is as before, no
 * history row and no delivery is left; the restarted worker completes the scan once, with the
 * right counts, history and deliveries.
 */
const DIR = path.resolve('test/fixtures/scans/rescan');

let rig: OutboxKillRig | undefined;
afterAll(async () => rig?.close());

describe('kill -9 of the worker mid-completion of a rescan', () => {
  it('leaves the scope unchanged; the retried job resolves it once', async () => {
    rig = await startOutboxKillRig('rescan', DIR);
    const { t, owner } = rig;
    const db = t.infra.pool;
    const openCases = async () =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM cases WHERE workspace_id = $1 AND status = 'open'`,
          [owner.workspaceId],
        )
      ).rows[0]!.n;

    const first = await waitForScan(t.app, owner.key, await rig.upload('nessus-first.nessus'), 60_000);
    expect(first.status, rig.worker().output()).toBe('completed');
    expect(await openCases()).toBe(12);

    // Hold the outbox: the rescan's completion resolves its cases, then waits to record deliveries.
    await rig.holdOutbox();
    const rescan = await rig.upload('nessus-second.nessus');
    await rig.waitBlockedOnOutbox();
    await rig.killWorkerAndReleaseOutbox();
    const mid = await db.query<{ status: string; resolved: number }>(
      `SELECT status, resolved_cases AS resolved FROM scans WHERE id = $1`,
      [rescan],
    );
    expect(mid.rows[0]).toEqual({ status: 'parsing', resolved: 0 });
    expect(await openCases()).toBe(12);
    const leftovers = await db.query<{ history: number; deliveries: number }>(
      `SELECT (SELECT count(*) FROM case_status_history WHERE actor = $1)::int AS history,
              (SELECT count(*) FROM workflow_deliveries WHERE event = 'case.status_changed')::int AS deliveries`,
      [`scan:${rescan}`],
    );
    expect(leftovers.rows[0]).toEqual({ history: 0, deliveries: 0 });

    await rig.restartWorker();
    const worker = rig.worker();
    const done = await waitForScan(t.app, owner.key, rescan, 120_000);
    expect(done, worker.output()).toMatchObject({
      status: 'completed',
      counts: { findings: 7, resolved: 5 },
    });
    expect(await openCases()).toBe(7);
    const after = await db.query<{ history: number; deliveries: number }>(
      `SELECT (SELECT count(*) FROM case_status_history WHERE actor = $1 AND reason = 'not_seen')::int AS history,
              (SELECT count(*) FROM workflow_deliveries WHERE event = 'case.status_changed')::int AS deliveries`,
      [`scan:${rescan}`],
    );
    expect(after.rows[0]).toEqual({ history: 5, deliveries: 5 });
    await worker.kill('SIGTERM');
  }, 240_000);
});
