import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testS3Env } from '../../helpers/db.js';
import { DAY } from '../../helpers/clock.js';
import { startScanApp, uploadScan, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { signUp } from '../../helpers/test-app.js';
import { seedMember } from '../../helpers/members.js';
import { maintenanceRun } from '../../../src/app/workers.js';

/*
 * The scan file retention (docs/operations.md#retention): a completed scan keeps its raw file
 * until its workspace's retention removes it; the maintenance run (many workers at once) removes
 * the files past it, marks the scans `fileDeleted`, and keeps every finding and case.
 */

const nessus = readFileSync(path.resolve('test/fixtures/scans/nessus/nessus_v_unknown.xml'));
const s3Env = testS3Env('scan file retention');
type Owner = Awaited<ReturnType<typeof signUp>>;

async function filesOf(t: ScanTestApp, workspaceId: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of t.storage.entries(workspaceId)) if (e.key) out.push(e.key);
  return out.sort();
}

function setRetention(t: ScanTestApp, owner: Owner, days: unknown) {
  return t.app.inject({
    method: 'PUT',
    url: '/api/console/workspace/retention',
    headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf },
    payload: { scanFileRetentionDays: days },
  });
}

async function scanOf(t: ScanTestApp, owner: Owner, scanId: string) {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/pipeline/scan/${scanId}`,
    headers: { 'x-api-key': owner.key },
  });
  return res.json() as { status: string; fileDeleted: boolean; fileDeletedAt: string | null };
}

const drivers = [
  { name: 'disk', env: {} as Record<string, string>, skip: false },
  { name: 'S3', env: s3Env ?? {}, skip: s3Env === null },
];

describe.each(drivers)('scan file retention, files on $name', ({ env, skip }) => {
  let t: ScanTestApp;
  let db: pg.Pool;

  beforeAll(async () => {
    if (skip) return;
    t = await startScanApp({ env });
    db = new pg.Pool({ connectionString: t.databaseUrl, max: 2 });
    db.on('error', () => undefined);
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await t?.close();
  });

  it.skipIf(skip)(
    'removes raw files past N days, marks the scan fileDeleted, and keeps its findings and cases',
    async () => {
      const owner = await signUp(t.app, { workspaceName: 'Retains' });
      const keeper = await signUp(t.app, { workspaceName: 'Keeps all' });
      const upload = async (o: Owner) => {
        const res = await uploadScan(t.app, o.key, nessus);
        expect(res.statusCode, res.body).toBe(202);
        const id = (res.json() as { scanId: string }).scanId;
        await waitForScan(t.app, o.key, id);
        return id;
      };
      const scanId = await upload(owner);
      const keptScanId = await upload(keeper);
      // By default a completed scan keeps its raw file.
      expect(await scanOf(t, owner, scanId)).toMatchObject({
        status: 'completed',
        fileDeleted: false,
        fileDeletedAt: null,
      });
      expect(await filesOf(t, owner.workspaceId)).toEqual([`${owner.workspaceId}/${scanId}`]);
      const counts = async () =>
        (
          await db.query(
            `SELECT (SELECT count(*) FROM findings WHERE scan_id = $1)::int AS findings,
                    (SELECT count(*) FROM cases WHERE workspace_id = $2)::int AS cases`,
            [scanId, owner.workspaceId],
          )
        ).rows[0];
      const before = await counts();
      expect(before.findings).toBeGreaterThan(0);

      const set = await setRetention(t, owner, 30);
      expect(set.statusCode, set.body).toBe(200);
      expect(set.json()).toEqual({ scanFileRetentionDays: 30 });
      const got = await t.app.inject({
        method: 'GET',
        url: '/api/console/workspace/retention',
        headers: { cookie: owner.cookie },
      });
      expect(got.json()).toEqual({ scanFileRetentionDays: 30 });
      const audit = await t.app.inject({
        method: 'GET',
        url: '/api/console/audit-events?action=retention_change',
        headers: { cookie: owner.cookie },
      });
      expect((audit.json() as { data: unknown[] }).data).toEqual([
        expect.objectContaining({
          action: 'retention_change',
          actor: expect.stringMatching(/^user:/),
          details: { setting: 'scanFileRetentionDays', from: null, to: 30 },
        }),
      ]);

      // Three workers' maintenance runs at once, each with the same injected clock.
      const run = maintenanceRun(t.deps.config, t.infra, t.deps);
      t.clock.advance(29 * DAY);
      expect((await Promise.all([run(), run(), run()])).map((r) => r.scanFilesRemoved)).toEqual([0, 0, 0]);
      expect((await scanOf(t, owner, scanId)).fileDeleted).toBe(false);

      t.clock.advance(2 * DAY);
      const removed = (await Promise.all([run(), run(), run()])).map((r) => r.scanFilesRemoved);
      expect(removed.reduce((a, b) => a + b, 0)).toBe(1);
      expect(await scanOf(t, owner, scanId)).toMatchObject({
        status: 'completed',
        fileDeleted: true,
        fileDeletedAt: t.clock().toISOString(),
      });
      expect(await filesOf(t, owner.workspaceId)).toEqual([]);
      expect(await counts()).toEqual(before);

      // A workspace without a retention keeps its files.
      expect((await scanOf(t, keeper, keptScanId)).fileDeleted).toBe(false);
      expect(await filesOf(t, keeper.workspaceId)).toEqual([`${keeper.workspaceId}/${keptScanId}`]);
    },
    120_000,
  );
});

describe('the retention setting refused', () => {
  let t: ScanTestApp;
  let db: pg.Pool;
  beforeAll(async () => {
    t = await startScanApp({ worker: false });
    db = new pg.Pool({ connectionString: t.databaseUrl, max: 2 });
    db.on('error', () => undefined);
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await t?.close();
  });

  it('answers 400 for days out of range or of the wrong type, 401 without a session, 403 for an admin (owners only)', async () => {
    const owner = await signUp(t.app, { workspaceName: 'Strict' });
    for (const days of [0, 3651, -1, 1.5, '30', true, {}]) {
      const res = await setRetention(t, owner, days);
      expect(res.statusCode, JSON.stringify(days)).toBe(400);
      expect(res.json()).toMatchObject({ status: 400, code: 'invalid_request' });
    }
    const extra = await t.app.inject({
      method: 'PUT',
      url: '/api/console/workspace/retention',
      headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf },
      payload: { scanFileRetentionDays: 30, other: 1 },
    });
    expect(extra.statusCode).toBe(400);
    const huge = await t.app.inject({
      method: 'PUT',
      url: '/api/console/workspace/retention',
      headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf, 'content-type': 'application/json' },
      payload: JSON.stringify({ scanFileRetentionDays: 30, pad: 'x'.repeat(8000) }),
    });
    expect(huge.statusCode).toBe(413);
    const anonymous = await t.app.inject({
      method: 'PUT',
      url: '/api/console/workspace/retention',
      payload: { scanFileRetentionDays: 30 },
    });
    expect(anonymous.statusCode).toBe(401);

    const seeded = await seedMember(t.app, t.databaseUrl, owner.workspaceId, 'admin');
    const member = { ...owner, cookie: seeded.cookie, csrf: seeded.csrf };
    const refused = await setRetention(t, member, 30);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ status: 403, code: 'insufficient_role' });
    expect((await setRetention(t, owner, 30)).statusCode).toBe(200);
    // Another workspace's setting is untouched by this one's.
    const other = await signUp(t.app, { workspaceName: 'Other' });
    const theirs = await t.app.inject({
      method: 'GET',
      url: '/api/console/workspace/retention',
      headers: { cookie: other.cookie },
    });
    expect(theirs.json()).toEqual({ scanFileRetentionDays: null });
  });
});
