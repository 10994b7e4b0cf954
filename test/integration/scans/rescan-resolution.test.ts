import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, signUpWorkflowManager } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { NO_SCOPE_NOTE, NOT_RESOLVING_NOTE } from '../../../src/domain/scans/rescan-scope.js';
import { createWorkflowTrigger } from '../../../src/domain/workflows/trigger.js';

/**
 * docs/ingestion.md#rescans: a completed scan resolves the open and in-progress cases of its
 * scope (scanner and hosts; or asset / subject for files without hosts) that it did not see,
 * with history (actor `scan:<id>`, reason `not_seen`), counts and a workflow delivery; a later
 * sighting reopens them. Real scanner files, derived in test/fixtures/scans/rescan (README).
 */
const DIR = path.resolve('test/fixtures/scans/rescan');
const file = (name: string) => readFileSync(path.join(DIR, name));

interface Counts {
  findings: number;
  new: number;
  resolved: number;
  reopened: number;
}
interface Done {
  scanId: string;
  status: string;
  counts: Counts;
  notes: string[];
  resolveMissing: boolean;
}

let t: ScanTestApp;
let ws: { key: string; workspaceId: string };
let other: { key: string; workspaceId: string };
let workflowId: string;

async function upload(
  who: { key: string },
  body: Buffer,
  query = '',
  contentType = 'application/xml',
): Promise<Done> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/pipeline/scan${query}`,
    headers: { 'x-api-key': who.key, 'content-type': contentType },
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(202);
  const scanId = (res.json() as { scanId: string }).scanId;
  const done = await waitForScan(t.app, who.key, scanId);
  return { ...(done as unknown as Done), scanId };
}

/** Cases of a workspace by host (or asset label) and status. */
async function cases(
  workspaceId: string,
): Promise<{ id: string; where: string; status: string; rule: string }[]> {
  const { rows } = await t.infra.pool.query<{ id: string; where: string; status: string; rule: string }>(
    `SELECT id, coalesce(host, asset) AS where, status, rule_id AS rule FROM cases WHERE workspace_id = $1 ORDER BY seq`,
    [workspaceId],
  );
  return rows;
}

async function statusCounts(workspaceId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const c of await cases(workspaceId)) out[c.status] = (out[c.status] ?? 0) + 1;
  return out;
}

async function historyOf(scanId: string) {
  const { rows } = await t.infra.pool.query<{
    case_id: string;
    from_status: string;
    to_status: string;
    reason: string;
  }>(`SELECT case_id, from_status, to_status, reason FROM case_status_history WHERE actor = $1 ORDER BY id`, [
    `scan:${scanId}`,
  ]);
  return rows;
}

async function setStatus(ids: string[], status: string): Promise<void> {
  await t.infra.pool.query(`UPDATE cases SET status = $2 WHERE id = ANY($1::uuid[])`, [ids, status]);
}

beforeAll(async () => {
  t = await startScanApp();
  ws = await signUpWorkflowManager(t.app);
  other = await signUp(t.app);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/workflows',
    headers: { 'x-api-key': ws.key, 'content-type': 'application/json' },
    payload: JSON.stringify({
      name: 'all cases',
      target: { kind: 'webhook', url: 'https://hooks.acme.test/v' },
    }),
  });
  expect(res.statusCode, res.body).toBe(201);
  workflowId = (res.json() as { id: string }).id;
});
afterAll(async () => {
  await t?.close();
});

describe('Nessus rescans of the same hosts', () => {
  it('resolves what the rescan no longer sees, on the hosts it covered, never accepted or false-positive cases', async () => {
    const first = await upload(ws, file('nessus-first.nessus'));
    expect(first.status).toBe('completed');
    expect(first.counts).toMatchObject({ findings: 12, new: 12, resolved: 0, reopened: 0 });
    // The other workspace has the same hosts: its cases are never touched by this one's scans.
    await upload(other, file('nessus-first.nessus'));

    const all = await cases(ws.workspaceId);
    const app03 = all.filter((c) => c.where === 'qa3app03');
    expect(app03).toHaveLength(4);
    await setStatus([app03[0]!.id], 'risk_accepted');
    await setStatus([app03[1]!.id], 'false_positive');
    await setStatus([app03[2]!.id], 'in_progress');

    // qa3app01 lost its second finding; qa3app03 is listed with no findings at all.
    const second = await upload(ws, file('nessus-second.nessus'));
    expect(second.status).toBe('completed');
    expect(second.counts).toMatchObject({ findings: 7, new: 0, resolved: 3, reopened: 0 });

    const after = await cases(ws.workspaceId);
    const resolved = after.filter((c) => c.status === 'resolved');
    expect(resolved.map((c) => c.where).sort()).toEqual(['qa3app01', 'qa3app03', 'qa3app03']);
    expect(after.find((c) => c.id === app03[0]!.id)!.status).toBe('risk_accepted');
    expect(after.find((c) => c.id === app03[1]!.id)!.status).toBe('false_positive');
    expect(after.filter((c) => c.where === 'qa3app02').every((c) => c.status === 'open')).toBe(true);

    const history = await historyOf(second.scanId);
    expect(history).toHaveLength(3);
    expect(history.every((h) => h.to_status === 'resolved' && h.reason === 'not_seen')).toBe(true);
    expect(history.map((h) => h.from_status).sort()).toEqual(['in_progress', 'open', 'open']);

    // Each resolution reached the workflow's outbox as case.status_changed.
    const { rows: deliveries } = await t.infra.pool.query<{ case_id: string }>(
      `SELECT case_id FROM workflow_deliveries WHERE workflow_id = $1 AND event = 'case.status_changed'`,
      [workflowId],
    );
    expect(deliveries.map((d) => d.case_id).sort()).toEqual(resolved.map((c) => c.id).sort());
    // After the commit, the scan's trigger queues those recorded deliveries (and records none again).
    const queued: string[] = [];
    const trigger = createWorkflowTrigger({
      pool: t.infra.pool,
      enqueue: async (id, ids) => {
        expect(id).toBe(workflowId);
        queued.push(...ids);
      },
    });
    expect(await trigger.scanCompleted(ws.workspaceId, second.scanId)).toBe(3);
    const { rows: recorded } = await t.infra.pool.query<{ id: string }>(
      `SELECT id FROM workflow_deliveries WHERE workflow_id = $1 AND event = 'case.status_changed'`,
      [workflowId],
    );
    expect(queued.sort()).toEqual(recorded.map((r) => r.id).sort());

    expect(await statusCounts(other.workspaceId)).toEqual({ open: 12 });
  });

  it('reopens them when they reappear, counted in counts.reopened', async () => {
    const again = await upload(ws, file('nessus-first.nessus'));
    expect(again.counts).toMatchObject({ resolved: 0, reopened: 3 });
    expect(await statusCounts(ws.workspaceId)).toEqual({ open: 10, risk_accepted: 1, false_positive: 1 });
  });

  it('a partial rescan resolves only on the hosts it scanned', async () => {
    const partial = await upload(ws, file('nessus-partial.nessus'));
    expect(partial.counts).toMatchObject({ findings: 3, resolved: 1 });
    const resolved = (await cases(ws.workspaceId)).filter((c) => c.status === 'resolved');
    expect(resolved.map((c) => c.where)).toEqual(['qa3app02']);
    await upload(ws, file('nessus-first.nessus'));
  });

  it('resolveMissing=false resolves nothing and says so', async () => {
    const off = await upload(ws, file('nessus-second.nessus'), '?resolveMissing=false');
    expect(off.resolveMissing).toBe(false);
    expect(off.counts.resolved).toBe(0);
    expect(off.notes).toContain(NOT_RESOLVING_NOTE);
    expect(await statusCounts(ws.workspaceId)).toEqual({ open: 10, risk_accepted: 1, false_positive: 1 });
  });

  it('a failed rescan resolves nothing', async () => {
    const broken = file('nessus-second.nessus').subarray(0, 3000);
    const failed = await upload(ws, broken);
    expect(failed.status).toBe('failed');
    expect(await statusCounts(ws.workspaceId)).toEqual({ open: 10, risk_accepted: 1, false_positive: 1 });
    expect(await historyOf(failed.scanId)).toEqual([]);
  });

  it('refuses a resolveMissing that is not a boolean', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/pipeline/scan?resolveMissing=perhaps',
      headers: { 'x-api-key': ws.key, 'content-type': 'application/xml' },
      payload: file('nessus-partial.nessus'),
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
  });
});

describe('rescans of files without hosts', () => {
  it('SARIF: the repository the file names is its scope; another repository resolves nothing of it', async () => {
    const a = await upload(other, file('njsscan-repo-a-first.sarif'), '', 'application/json');
    expect(a.counts).toMatchObject({ findings: 2, new: 2 });
    const b = await upload(other, file('njsscan-repo-b.sarif'), '', 'application/json');
    expect(b.counts).toMatchObject({ findings: 0, resolved: 0 });
    const again = await upload(other, file('njsscan-repo-a-second.sarif'), '', 'application/json');
    expect(again.counts).toMatchObject({ findings: 1, resolved: 1 });
  });

  it('SARIF with asset=: one asset’s rescan never resolves another asset’s cases', async () => {
    const x = await upload(other, file('njsscan-repo-a-first.sarif'), '?asset=app-x', 'application/json');
    expect(x.counts).toMatchObject({ new: 2 });
    // asset= wins over the file's repository: app-y's empty rescan covers app-y only.
    const y = await upload(other, file('njsscan-repo-a-second.sarif'), '?asset=app-y', 'application/json');
    expect(y.counts).toMatchObject({ new: 1, resolved: 0 });
    const x2 = await upload(other, file('njsscan-repo-a-second.sarif'), '?asset=app-x', 'application/json');
    expect(x2.counts).toMatchObject({ resolved: 1 });
    const { rows } = await t.infra.pool.query<{ asset: string; status: string }>(
      `SELECT asset, status FROM cases WHERE workspace_id = $1 AND asset IN ('app-x', 'app-y') ORDER BY asset, status`,
      [other.workspaceId],
    );
    expect(rows).toEqual([
      { asset: 'app-x', status: 'open' },
      { asset: 'app-x', status: 'resolved' },
      { asset: 'app-y', status: 'open' },
    ]);
  });

  it('CycloneDX: the BOM’s metadata.component is its scope, across versions; another component resolves nothing', async () => {
    const v1 = await upload(ws, file('jake2-shop-api-1.0.json'), '', 'application/json');
    expect(v1.counts).toMatchObject({ findings: 7, new: 7 });
    const billing = await upload(ws, file('billing-1.0.json'), '', 'application/json');
    expect(billing.counts).toMatchObject({ findings: 0, resolved: 0 });
    const v11 = await upload(ws, file('jake2-shop-api-1.1.json'), '', 'application/json');
    expect(v11.counts).toMatchObject({ findings: 6, resolved: 1 });
  });

  it('a file with no scope it can name resolves nothing and says so', async () => {
    const bare = readFileSync(path.resolve('test/fixtures/scans/cyclonedx/valid-vulnerability-1.4.json'));
    const done = await upload(ws, bare, '', 'application/json');
    expect(done.counts.resolved).toBe(0);
    expect(done.notes).toContain(NO_SCOPE_NOTE);
  });
});
