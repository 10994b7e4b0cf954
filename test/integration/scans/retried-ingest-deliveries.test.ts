import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpWorkflowManager } from '../../helpers/test-app.js';
import { eventually, startScanApp, type ScanTestApp } from '../../helpers/scan-app.js';
import { parseScan } from '../../../src/parsers/index.js';
import { ingestScan, type ParseStoredScan } from '../../../src/domain/scans/ingest-scan.js';
import { SCAN_INGEST_QUEUE } from '../../../src/jobs/scan-ingest.js';
import { DELIVERY_QUEUE } from '../../../src/jobs/workflow-delivery.js';

/**
 * A scan's completion records its `case.created` deliveries (docs/workflows.md#when-deliveries-happen);
 * the attempt that committed it queues them. When that attempt dies right after the commit, the
 * retried job finds the scan completed and queues them itself, without waiting for the
 * maintenance sweep; the sweep running as well queues no delivery twice.
 */
let t: ScanTestApp;
let owner: Awaited<ReturnType<typeof signUpWorkflowManager>>;

/** The same parse the threads run, in this process. */
const inProcess: ParseStoredScan = async (request, onBatch) => {
  const parse = parseScan(t.storage.open(request.key), {
    format: request.format,
    gzip: request.gzip,
    batchSize: request.batchSize,
    uploadAsset: request.uploadAsset,
  });
  for await (const batch of parse) await onBatch(batch, { bytesRead: 0 });
  return parse.result!;
};

const jobsWaiting = async (queue: string) => {
  const n = await t.infra.queues.queue(queue).getJobCounts('waiting', 'active', 'delayed');
  return (n.waiting ?? 0) + (n.active ?? 0) + (n.delayed ?? 0);
};

beforeAll(async () => {
  t = await startScanApp({ worker: false });
  owner = await signUpWorkflowManager(t.app);
  const wf = await t.app.inject({
    method: 'POST',
    url: '/api/v1/workflows',
    headers: { 'x-api-key': owner.key, 'content-type': 'application/json' },
    payload: JSON.stringify({ name: 'all', target: { kind: 'webhook', url: 'https://hooks.acme.test/v' } }),
  });
  expect(wf.statusCode, wf.body).toBe(201);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

describe('a retried ingest job whose scan is already completed', () => {
  it('queues the deliveries the completion recorded, without the sweep; the sweep queues none twice', async () => {
    const findings = Array.from({ length: 5 }, (_, i) => ({
      title: `Retried ${i}`,
      severity: 'high',
      asset: `retry-host-${i}`,
      ruleId: 'R1',
    }));
    const up = await t.app.inject({
      method: 'POST',
      url: '/api/pipeline/scan?format=cli',
      headers: { 'x-api-key': owner.key, 'content-type': 'application/json' },
      payload: JSON.stringify({ tool: { name: 'retry-test', version: '1' }, findings }),
    });
    expect(up.statusCode, up.body).toBe(202);
    const scanId = up.json().scanId as string;

    // The first attempt completes the scan and dies before queuing its deliveries: its job stays.
    const first = await ingestScan(
      { pool: t.infra.pool, storage: t.storage, logger: t.deps.logger, parse: inProcess },
      { scanId, workspaceId: owner.workspaceId },
    );
    expect(first).toMatchObject({ kind: 'completed', findings: 5 });
    const { rows } = await t.infra.pool.query<{ id: string; status: string }>(
      `SELECT id, status FROM workflow_deliveries WHERE workspace_id = $1 AND event = 'case.created'`,
      [owner.workspaceId],
    );
    expect(rows.map((r) => r.status)).toEqual(Array(5).fill('pending'));
    const deliveries = t.infra.queues.queue(DELIVERY_QUEUE);
    for (const r of rows) expect(await deliveries.getJobState(r.id)).toBe('unknown');

    // The retry: the real worker takes the job, finds the scan completed, and queues them.
    t.startWorker();
    expect(await eventually(async () => (await jobsWaiting(SCAN_INGEST_QUEUE)) === 0, 30_000)).toBe(true);
    for (const r of rows) expect(await deliveries.getJobState(r.id)).not.toBe('unknown');
    expect(await jobsWaiting(DELIVERY_QUEUE)).toBe(5);

    // The sweep as well: each delivery keeps its one job.
    expect(await t.deps.workflows.requeueLost(0)).toBe(5);
    expect(await jobsWaiting(DELIVERY_QUEUE)).toBe(5);
  });
});
