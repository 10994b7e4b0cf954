/* eslint-disable @typescript-eslint/no-explicit-any -- assertions walk parsed JSON documents */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, signUp, signUpWorkflowManager } from '../../helpers/test-app.js';
import { startScanApp, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { problemDocument } from '../../helpers/problem.js';

/**
 * `DELETE /api/v1/scans/:id` (docs/ingestion.md#deleting-a-scan): the scan's findings go, the
 * cases only it sighted go, cases another scan sighted stay recounted, an audit event records it;
 * a scan still queued or parsing is refused; another workspace's scan is 404.
 */
const finding = (name: string) => ({
  title: `Finding ${name}`,
  severity: 'high',
  cveIds: ['CVE-2099-41000'],
  asset: `host-${name}`,
  ruleId: `R-${name}`,
});

let t: ScanTestApp;
let owner: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;

const call = (method: 'GET' | 'DELETE', url: string, key = owner.key) =>
  t.app.inject({ method, url, headers: { 'x-api-key': key } });

async function submit(key: string, names: string[]): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/pipeline/scan?format=cli',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify({ tool: { name: 'delete-test', version: '1' }, findings: names.map(finding) }),
  });
  expect(res.statusCode, res.body).toBe(202);
  return (res.json() as { scanId: string }).scanId;
}

async function upload(key: string, names: string[]): Promise<string> {
  const scanId = await submit(key, names);
  expect((await waitForScan(t.app, key, scanId)).status).toBe('completed');
  return scanId;
}

const casesByTitle = async (key = owner.key) =>
  new Map(
    ((await call('GET', '/api/v1/cases?limit=200', key)).json().data as any[]).map((c) => [c.title, c]),
  );

beforeAll(async () => {
  t = await startScanApp();
  owner = await signUp(t.app);
  other = await signUp(t.app);
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('DELETE /api/v1/scans/:id', () => {
  it('removes its findings and the cases only it sighted, keeps and recounts the rest, and audits it', async () => {
    const first = await upload(owner.key, ['a', 'b']);
    const mistake = await upload(owner.key, ['b', 'c']);
    const before = await casesByTitle();
    expect(before.get('Finding b')).toMatchObject({ sightings: 2, lastScanId: mistake });
    const caseC = before.get('Finding c')!.id as string;

    const res = await call('DELETE', `/api/v1/scans/${mistake}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      object: 'scan_deletion',
      scanId: mistake,
      findings: 2,
      casesDeleted: 1,
      casesClosed: 0,
      casesKept: 1,
    });

    expect((await call('GET', `/api/v1/scans/${mistake}`)).statusCode).toBe(404);
    expect((await call('GET', `/api/v1/findings?scan=${mistake}`)).json().data).toEqual([]);
    expect((await call('GET', `/api/v1/findings?scan=${first}`)).json().data).toHaveLength(2);
    expect((await call('GET', `/api/v1/cases/${caseC}`)).statusCode).toBe(404);
    const after = await casesByTitle();
    expect([...after.keys()].sort()).toEqual(['Finding a', 'Finding b']);
    expect(after.get('Finding b')).toMatchObject({ sightings: 1, firstScanId: first, lastScanId: first });
    const evidence = await call('GET', `/api/v1/cases/${after.get('Finding b')!.id}/evidence`);
    expect(evidence.json().data.map((e: any) => e.scanId)).toEqual([first]);

    const admin = await createKey(t.app, owner, ['keys:write'], 'admin');
    const audit = await call('GET', '/api/v1/audit-events?action=scan_delete', admin.key);
    expect(audit.statusCode, audit.body).toBe(200);
    expect(audit.json().data).toEqual([
      expect.objectContaining({
        action: 'scan_delete',
        actor: `key:${owner.keyId}`,
        keyId: null,
        details: expect.objectContaining({
          scanId: mistake,
          findings: 2,
          casesDeleted: 1,
          casesKept: 1,
          format: 'cli',
        }),
      }),
    ]);
  });

  it('keeps a case only it sighted whose issue is open, as false_positive, and records the delivery that closes the issue', async () => {
    const manager = await signUpWorkflowManager(t.app);
    const wf = await t.app.inject({
      method: 'POST',
      url: '/api/v1/workflows',
      headers: { 'x-api-key': manager.key, 'content-type': 'application/json' },
      payload: JSON.stringify({
        name: 'to GitHub',
        target: { kind: 'github', owner: 'acme', repo: 'vulns', token: 'github_pat_test' },
      }),
    });
    expect(wf.statusCode, wf.body).toBe(201);
    const workflowId: string = wf.json().id;
    const mistake = await upload(manager.key, ['d', 'e']);
    const cases = await casesByTitle(manager.key);
    const [linked, unlinked] = [cases.get('Finding d')!.id as string, cases.get('Finding e')!.id as string];
    // The workflow made an issue of one of them (as a delivery stores it).
    await t.infra.pool.query(
      `INSERT INTO workflow_links (workflow_id, case_id, workspace_id, marker, external_id, url, create_attempts)
       VALUES ($1, $2, $3, 'vt-test-d', '17', 'https://github.com/acme/vulns/issues/17', 1)`,
      [workflowId, linked, manager.workspaceId],
    );

    const res = await call('DELETE', `/api/v1/scans/${mistake}`, manager.key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      object: 'scan_deletion',
      scanId: mistake,
      findings: 2,
      casesDeleted: 1,
      casesClosed: 1,
      casesKept: 0,
    });
    expect((await call('GET', `/api/v1/cases/${unlinked}`, manager.key)).statusCode).toBe(404);
    const kept = (await call('GET', `/api/v1/cases/${linked}`, manager.key)).json();
    expect(kept.status).toBe('false_positive');
    expect(kept.history.at(-1)).toMatchObject({
      from: 'open',
      to: 'false_positive',
      actor: `key:${manager.keyId}`,
      reason: 'scan_deleted',
      note: `The only scan that sighted it (${mistake}) was deleted.`,
    });
    const { rows } = await t.infra.pool.query<{ event: string }>(
      `SELECT event FROM workflow_deliveries WHERE workflow_id = $1 AND case_id = $2 AND event <> 'case.created'`,
      [workflowId, linked],
    );
    expect(rows).toEqual([{ event: 'case.status_changed' }]);
  });

  it('refuses a scan that is queued or parsing with 409, and deletes it once it has ended', async () => {
    await t.stopWorker();
    const queued = await submit(owner.key, ['q']);
    const res = await call('DELETE', `/api/v1/scans/${queued}`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(
      problemDocument(
        409,
        'conflict',
        'Conflict',
        'The scan is queued; delete it once it has completed or failed.',
      ),
    );
    await t.infra.pool.query(`UPDATE scans SET status = 'parsing' WHERE id = $1`, [queued]);
    const parsing = await call('DELETE', `/api/v1/scans/${queued}`);
    expect(parsing.statusCode).toBe(409);
    expect(parsing.json().detail).toBe('The scan is parsing; delete it once it has completed or failed.');
    expect((await call('GET', `/api/v1/scans/${queued}`)).statusCode).toBe(200);
    await t.infra.pool.query(`UPDATE scans SET status = 'failed' WHERE id = $1`, [queued]);
    expect((await call('DELETE', `/api/v1/scans/${queued}`)).statusCode).toBe(200);
    t.startWorker();
  });

  it("answers 404 for another workspace's scan, an unknown id and a malformed one, deleting nothing", async () => {
    const theirs = await upload(other.key, ['x']);
    for (const id of [theirs, '00000000-0000-4000-8000-000000000000', 'not-a-uuid', "1' OR '1'='1"]) {
      const res = await call('DELETE', `/api/v1/scans/${encodeURIComponent(id)}`);
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toEqual(problemDocument(404, 'not_found', 'Not found', 'No such scan.'));
    }
    expect((await call('GET', `/api/v1/scans/${theirs}`, other.key)).json().status).toBe('completed');
    expect((await casesByTitle(other.key)).has('Finding x')).toBe(true);
  });

  it('needs scans:write', async () => {
    const scanId = await upload(owner.key, ['r']);
    const reader = await createKey(t.app, owner, ['scans:read', 'cases:write'], 'reader');
    const res = await call('DELETE', `/api/v1/scans/${scanId}`, reader.key);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(
      problemDocument(
        403,
        'insufficient_scope',
        'Insufficient scope',
        'This route needs a key with the scans:write scope.',
      ),
    );
    expect((await call('GET', `/api/v1/scans/${scanId}`)).statusCode).toBe(200);
  });
});
