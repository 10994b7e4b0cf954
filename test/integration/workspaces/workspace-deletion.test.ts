import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl, testS3Env } from '../../helpers/db.js';
import { problemDocument } from '../../helpers/problem.js';
import { startScanApp, uploadScan, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { signUp, startTestApp, type TestApp } from '../../helpers/test-app.js';
import type { StoredEntry } from '../../../src/domain/scans/scan-storage.js';
import { EXPORT_QUEUE, exportProcessor, type ExportPayload } from '../../../src/jobs/export-job.js';
import {
  WORKSPACE_DELETION_QUEUE,
  workspaceDeletionProcessor,
  type WorkspaceDeletionPayload,
} from '../../../src/jobs/workspace-deletion.js';

/*
 * A workspace's end of life (docs/operations.md#end-of-life): the owner's request revokes every
 * key at once (in this process and in another one sharing the deployment), ends the sessions,
 * and the removal job leaves no row naming the workspace in any table and no stored file or
 * object of it, on disk and on S3, while another workspace keeps everything.
 */

const nessus = readFileSync(path.resolve('test/fixtures/scans/nessus/nessus_v_unknown.xml'));
const redisUrl = testRedisUrl() || undefined;
const s3Env = testS3Env('workspace deletion');

type Owner = Awaited<ReturnType<typeof signUp>>;

/** Every table of the schema with a `workspace_id` column, but the record that must outlive it. */
async function workspaceTables(db: pg.Pool): Promise<string[]> {
  const { rows } = await db.query<{ table_name: string }>(
    `SELECT c.table_name FROM information_schema.columns c
       JOIN information_schema.tables t USING (table_schema, table_name)
      WHERE c.table_schema = 'public' AND c.column_name = 'workspace_id' AND t.table_type = 'BASE TABLE'
        AND c.table_name <> 'workspace_deletions'
      ORDER BY 1`,
  );
  return rows.map((r) => r.table_name);
}

/** Rows naming `workspaceId`, per table (tables with none left out). */
async function rowsOf(db: pg.Pool, workspaceId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of await workspaceTables(db)) {
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${pg.escapeIdentifier(table)} WHERE workspace_id = $1`,
      [workspaceId],
    );
    if (Number(rows[0]!.n) > 0) out[table] = Number(rows[0]!.n);
  }
  const ws = await db.query(`SELECT 1 FROM workspaces WHERE id = $1`, [workspaceId]);
  if (ws.rowCount) out.workspaces = ws.rowCount;
  return out;
}

async function filesOf(t: ScanTestApp, workspaceId: string): Promise<string[]> {
  const out: StoredEntry[] = [];
  for await (const e of t.storage.entries()) if (e.key?.startsWith(`${workspaceId}/`)) out.push(e);
  return out.map((e) => e.key!).sort();
}

/** What a busy workspace holds: a parsed scan (cases, findings) and an export file. */
async function fillWorkspace(t: ScanTestApp, owner: Owner): Promise<void> {
  const parsed = await uploadScan(t.app, owner.key, nessus);
  expect(parsed.statusCode, parsed.body).toBe(202);
  await waitForScan(t.app, owner.key, (parsed.json() as { scanId: string }).scanId);
  const exp = await t.app.inject({
    method: 'POST',
    url: '/api/v1/exports',
    headers: { 'x-api-key': owner.key },
    payload: { format: 'jsonl' },
  });
  expect(exp.statusCode, exp.body).toBe(202);
  const exportId = (exp.json() as { id: string }).id;
  for (let i = 0; i < 300; i++) {
    const e = await t.app.inject({
      method: 'GET',
      url: `/api/v1/exports/${exportId}`,
      headers: { 'x-api-key': owner.key },
    });
    if ((e.json() as { status: string }).status === 'completed') break;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A scan not parsed yet keeps its file in storage: uploaded while no ingest worker runs. */
async function uploadWaiting(t: ScanTestApp, owner: Owner): Promise<void> {
  const waiting = await uploadScan(t.app, owner.key, nessus);
  expect(waiting.statusCode, waiting.body).toBe(202);
}

function requestDeletion(t: TestApp, owner: Owner, workspaceId: string, confirmName: string) {
  return t.app.inject({
    method: 'POST',
    url: `/api/console/workspaces/${workspaceId}/deletion`,
    headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf },
    payload: { confirmName },
  });
}

async function pollFinished(t: TestApp, statusUrl: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 600; i++) {
    const res = await t.app.inject({ method: 'GET', url: statusUrl });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as Record<string, unknown>;
    if (body.status === 'finished') return body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the removal did not finish');
}

const drivers = [
  { name: 'disk', env: {} as Record<string, string>, skip: false },
  { name: 'S3', env: s3Env ?? {}, skip: s3Env === null },
];

describe.each(drivers)('deleting a workspace, files on $name', ({ env, skip }) => {
  let t: ScanTestApp;
  let other: TestApp;
  let db: pg.Pool;
  const workers: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    if (skip) return;
    t = await startScanApp({ redisUrl, env: { KEY_CACHE_TTL_MS: '60000', ...env } });
    // Another web process of the same deployment: its own key cache and invalidation subscription.
    other = await startTestApp({
      redisUrl,
      databaseUrl: t.databaseUrl,
      queueNamespace: t.deps.config.redisPrefix,
      env: { KEY_CACHE_TTL_MS: '60000', SCAN_STORAGE_DIR: t.storageDir, ...env },
    });
    workers.push(t.infra.queues.worker<ExportPayload, void>(EXPORT_QUEUE, exportProcessor(t.deps.exports)));
    db = new pg.Pool({ connectionString: t.databaseUrl, max: 2 });
    db.on('error', () => undefined);
  }, 60_000);
  afterAll(async () => {
    for (const w of workers) await w.close();
    await db?.end();
    await other?.close();
    await t?.close();
  });

  it.skipIf(skip)(
    'revokes every key at once, everywhere, ends the sessions, and leaves no row or file of it',
    async () => {
      const doomed = await signUp(t.app, { workspaceName: 'Doomed Co' });
      const kept = await signUp(t.app, { workspaceName: 'Kept Co' });
      await fillWorkspace(t, doomed);
      await fillWorkspace(t, kept);
      await t.stopWorker();
      await uploadWaiting(t, doomed);
      await uploadWaiting(t, kept);
      expect(Object.keys(await rowsOf(db, doomed.workspaceId))).toEqual(
        expect.arrayContaining(['api_keys', 'scans', 'findings', 'cases', 'exports', 'memberships']),
      );
      expect((await filesOf(t, doomed.workspaceId)).length).toBeGreaterThanOrEqual(2);
      // The request meter writes a key's counts on a timer: written now, so the snapshot holds them.
      await t.deps.meter.flush();
      const keptRows = await rowsOf(db, kept.workspaceId);
      const keptFiles = await filesOf(t, kept.workspaceId);

      // Both processes have the key in their cache (a 60 s TTL: only an invalidation ends it).
      const me = (app: TestApp, key: string) =>
        app.app.inject({ method: 'GET', url: '/api/v1/keys/me', headers: { 'x-api-key': key } });
      expect((await me(t, doomed.key)).statusCode).toBe(200);
      expect((await me(other, doomed.key)).statusCode).toBe(200);

      const res = await requestDeletion(t, doomed, doomed.workspaceId, 'Doomed Co');
      expect(res.statusCode, res.body).toBe(202);
      const body = res.json() as { id: string; status: string; statusUrl: string; finishedAt: null };
      expect(body).toMatchObject({ workspaceId: doomed.workspaceId, finishedAt: null });
      expect(res.headers.location).toBe(body.statusUrl);

      // At once in this process; in the other as soon as the invalidation arrives.
      expect((await me(t, doomed.key)).json()).toMatchObject({ status: 401, code: 'key_revoked' });
      let there = await me(other, doomed.key);
      for (let i = 0; i < 100 && there.statusCode === 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
        there = await me(other, doomed.key);
      }
      expect(there.json()).toMatchObject({ status: 401, code: 'key_revoked' });
      // The session ended, and its owner cannot sign in to it again.
      const session = await t.app.inject({
        method: 'GET',
        url: '/api/console/workspace',
        headers: { cookie: doomed.cookie },
      });
      expect(session.statusCode).toBe(401);
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/console/login',
        payload: { email: doomed.email, password: doomed.password },
      });
      expect(login.statusCode).toBe(401);
      // The audit record outlives the data.
      const audit = await db.query(`SELECT workspace_name, actor FROM workspace_deletions WHERE id = $1`, [
        body.id,
      ]);
      expect(audit.rows).toEqual([{ workspace_name: 'Doomed Co', actor: expect.stringMatching(/^user:/) }]);

      // The removal: run twice at once (a retried job beside a late one) and then by the worker.
      const twice = await Promise.all([
        t.deps.workspaceDeletions.remove(body.id),
        t.deps.workspaceDeletions.remove(body.id),
      ]);
      expect(twice.map((o) => o.kind)).toContain('finished');
      workers.push(
        t.infra.queues.worker<WorkspaceDeletionPayload, unknown>(
          WORKSPACE_DELETION_QUEUE,
          workspaceDeletionProcessor(t.deps.workspaceDeletions),
        ),
      );
      const finished = await pollFinished(t, body.statusUrl);
      expect(finished).toMatchObject({ status: 'finished', finishedAt: expect.any(String) });
      expect(finished.scansRemoved).toBeGreaterThanOrEqual(2);

      expect(await rowsOf(db, doomed.workspaceId)).toEqual({});
      expect(await filesOf(t, doomed.workspaceId)).toEqual([]);
      const users = await db.query(`SELECT 1 FROM console_users WHERE lower(email) = lower($1)`, [
        doomed.email,
      ]);
      expect(users.rowCount).toBe(0);
      expect((await me(other, doomed.key)).statusCode).toBe(401);

      // The other workspace kept every row and file, and its key and session still work.
      expect(await rowsOf(db, kept.workspaceId)).toEqual(keptRows);
      expect(await filesOf(t, kept.workspaceId)).toEqual(keptFiles);
      expect((await me(t, kept.key)).statusCode).toBe(200);
      const keptSession = await t.app.inject({
        method: 'GET',
        url: '/api/console/workspace',
        headers: { cookie: kept.cookie },
      });
      expect(keptSession.statusCode).toBe(200);
    },
    120_000,
  );
});

describe('a deletion request refused', () => {
  let t: TestApp;
  let db: pg.Pool;

  beforeAll(async () => {
    t = await startTestApp({ redisUrl });
    db = new pg.Pool({ connectionString: t.databaseUrl, max: 2 });
    db.on('error', () => undefined);
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await t?.close();
  });

  const stillThere = async (owner: Owner) => {
    const me = await t.app.inject({
      method: 'GET',
      url: '/api/v1/keys/me',
      headers: { 'x-api-key': owner.key },
    });
    expect(me.statusCode).toBe(200);
    const n = await db.query(`SELECT count(*)::int AS n FROM workspace_deletions WHERE workspace_id = $1`, [
      owner.workspaceId,
    ]);
    expect(n.rows[0].n).toBe(0);
  };

  it('answers 422 for a wrong typed name, and deletes nothing', async () => {
    const owner = await signUp(t.app, { workspaceName: 'Exact Name' });
    for (const typed of ['exact name', 'Exact Name!', 'Other']) {
      const res = await requestDeletion(t, owner, owner.workspaceId, typed);
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual(
        problemDocument(
          422,
          'confirmation_mismatch',
          'Confirmation does not match',
          "The name typed is not the workspace's name; nothing was deleted.",
        ),
      );
    }
    await stillThere(owner);
  });

  it("answers 404 to another workspace's owner, and deletes nothing", async () => {
    const victim = await signUp(t.app, { workspaceName: 'Victim' });
    const attacker = await signUp(t.app, { workspaceName: 'Attacker' });
    const res = await requestDeletion(t, attacker, victim.workspaceId, 'Victim');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(problemDocument(404, 'not_found', 'Not found', 'No such workspace.'));
    await stillThere(victim);
    await stillThere(attacker);
  });

  it('answers 403 insufficient_role to a member who is not an owner', async () => {
    const owner = await signUp(t.app, { workspaceName: 'Team' });
    const userId = randomUUID();
    await db.query(`INSERT INTO console_users (id, email, password_hash) VALUES ($1, $2, 'x')`, [
      userId,
      `member-${userId}@example.com`,
    ]);
    await db.query(`INSERT INTO memberships (user_id, workspace_id, role) VALUES ($1, $2, 'admin')`, [
      userId,
      owner.workspaceId,
    ]);
    const { token, session } = await t.deps.sessions.create(userId, owner.workspaceId, 'admin');
    const res = await requestDeletion(
      t,
      { ...owner, cookie: `svc_session=${token}`, csrf: session.csrfToken },
      owner.workspaceId,
      'Team',
    );
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ status: 403, code: 'insufficient_role' });
    await stillThere(owner);
  });

  it('refuses without a session, without the CSRF token, and with hostile or oversized bodies', async () => {
    const owner = await signUp(t.app, { workspaceName: 'Careful' });
    const url = `/api/console/workspaces/${owner.workspaceId}/deletion`;
    const noSession = await t.app.inject({ method: 'POST', url, payload: { confirmName: 'Careful' } });
    expect(noSession.statusCode).toBe(401);
    const noCsrf = await t.app.inject({
      method: 'POST',
      url,
      headers: { cookie: owner.cookie },
      payload: { confirmName: 'Careful' },
    });
    expect(noCsrf.statusCode).toBe(403);
    const headers = { cookie: owner.cookie, 'x-csrf-token': owner.csrf };
    const cases: [unknown, number][] = [
      [{}, 400],
      [{ confirmName: '' }, 400],
      [{ confirmName: 'Careful', extra: true }, 400],
      [{ confirmName: 42 }, 400],
      [{ confirmName: 'x'.repeat(121) }, 400],
      [{ confirmName: 'Care\u0000ful' }, 400],
    ];
    for (const [payload, status] of cases) {
      const res = await t.app.inject({ method: 'POST', url, headers, payload: payload as object });
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    }
    const huge = await t.app.inject({
      method: 'POST',
      url,
      headers: { ...headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ confirmName: 'y'.repeat(10_000) }),
    });
    expect(huge.statusCode).toBe(413);
    const malformed = await t.app.inject({
      method: 'POST',
      url,
      headers: { ...headers, 'content-type': 'application/json' },
      payload: '{"confirmName":',
    });
    expect(malformed.statusCode).toBe(400);
    const badId = await t.app.inject({
      method: 'POST',
      url: '/api/console/workspaces/not-a-uuid/deletion',
      headers,
      payload: { confirmName: 'Careful' },
    });
    expect(badId.statusCode).toBe(400);
    await stillThere(owner);
  });

  it('answers 404 for an unknown deletion and 400 for a malformed id', async () => {
    const unknown = await t.app.inject({
      method: 'GET',
      url: `/api/console/workspace-deletions/${randomUUID()}`,
    });
    expect(unknown.json()).toEqual(
      problemDocument(404, 'not_found', 'Not found', 'No such workspace deletion.'),
    );
    const bad = await t.app.inject({
      method: 'GET',
      url: '/api/console/workspace-deletions/1%27%20OR%201=1',
    });
    expect(bad.statusCode).toBe(400);
  });
});
