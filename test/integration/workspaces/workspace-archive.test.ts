import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScanApp, uploadScan, waitForScan, type ScanTestApp } from '../../helpers/scan-app.js';
import { signUp } from '../../helpers/test-app.js';
import { seedMember } from '../../helpers/members.js';

/*
 * The workspace archive (docs/operations.md#workspace-archive): one .tar.gz of the workspace's
 * records, read back with the system's `tar`, holding exactly the documented files, and only this
 * workspace's records.
 */

const nessus = readFileSync(path.resolve('test/fixtures/scans/nessus/nessus_v_unknown.xml'));
const FILES = [
  'manifest.json',
  'cases.jsonl',
  'case-status-history.jsonl',
  'case-triage-history.jsonl',
  'audit-log.jsonl',
  'usage-statement.json',
];
type Owner = Awaited<ReturnType<typeof signUp>>;

describe('the workspace archive', () => {
  let t: ScanTestApp;
  let db: pg.Pool;
  const dirs: string[] = [];

  beforeAll(async () => {
    t = await startScanApp();
    db = new pg.Pool({ connectionString: t.databaseUrl, max: 2 });
    db.on('error', () => undefined);
  }, 60_000);
  afterAll(async () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await db?.end();
    await t?.close();
  });

  const archive = (o: Pick<Owner, 'cookie'>) =>
    t.app.inject({ method: 'GET', url: '/api/console/workspace/archive', headers: { cookie: o.cookie } });

  /** Unpacks with the system's tar; returns the member names in order and the folder. */
  function unpack(body: Buffer): { names: string[]; dir: string } {
    const dir = mkdtempSync(path.join(tmpdir(), 'archive-test-'));
    dirs.push(dir);
    const file = path.join(dir, 'a.tar.gz');
    writeFileSync(file, body);
    const names = execFileSync('tar', ['-tzf', file], { encoding: 'utf8' }).trim().split('\n');
    execFileSync('tar', ['-xzf', file, '-C', dir]);
    return { names, dir };
  }
  const lines = (dir: string, name: string) =>
    readFileSync(path.join(dir, name), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it("holds the documented files with the workspace's cases, their history, the audit log and the usage statement", async () => {
    const owner = await signUp(t.app, { workspaceName: 'Archived' });
    const other = await signUp(t.app, { workspaceName: 'Elsewhere' });
    for (const o of [owner, other]) {
      const res = await uploadScan(t.app, o.key, nessus);
      await waitForScan(t.app, o.key, (res.json() as { scanId: string }).scanId);
    }
    const caseId = (
      await db.query<{ id: string }>(`SELECT id FROM cases WHERE workspace_id = $1 ORDER BY id LIMIT 1`, [
        owner.workspaceId,
      ])
    ).rows[0]!.id;
    const patch = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/cases/${caseId}`,
      headers: { 'x-api-key': owner.key },
      payload: { status: 'in_progress', note: 'looking into it' },
    });
    expect(patch.statusCode, patch.body).toBe(200);

    const res = await archive(owner);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/gzip');
    expect(res.headers['content-disposition']).toMatch(
      new RegExp(`^attachment; filename="workspace-${owner.workspaceId}-\\d{4}-\\d{2}-\\d{2}\\.tar\\.gz"$`),
    );
    expect(res.headers['cache-control']).toBe('no-store');
    const { names, dir } = unpack(res.rawPayload);
    expect(names).toEqual(FILES);

    const caseCount = Number(
      (await db.query(`SELECT count(*) FROM cases WHERE workspace_id = $1`, [owner.workspaceId])).rows[0]
        .count,
    );
    const cases = lines(dir, 'cases.jsonl');
    expect(cases).toHaveLength(caseCount);
    expect(cases.find((c) => c.id === caseId)).toMatchObject({ object: 'case', status: 'in_progress' });
    const otherCases = await db.query<{ id: string }>(`SELECT id FROM cases WHERE workspace_id = $1`, [
      other.workspaceId,
    ]);
    const ids = new Set(cases.map((c) => c.id));
    expect(otherCases.rows.some((r) => ids.has(r.id))).toBe(false);

    expect(lines(dir, 'case-status-history.jsonl')).toContainEqual(
      expect.objectContaining({ caseId, toStatus: 'in_progress', note: 'looking into it' }),
    );
    const audit = lines(dir, 'audit-log.jsonl');
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(['create', 'reveal']));
    const statement = JSON.parse(readFileSync(path.join(dir, 'usage-statement.json'), 'utf8')) as {
      object: string;
      months: { month: string }[];
    };
    expect(statement.object).toBe('usage_statement');
    expect(statement.months.at(-1)!.month).toBe(t.clock().toISOString().slice(0, 7));
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(manifest).toMatchObject({
      object: 'workspace_archive',
      workspace: { id: owner.workspaceId, name: 'Archived' },
    });
    expect(manifest.files).toContainEqual({ name: 'cases.jsonl', records: caseCount });
    expect(manifest.files).toContainEqual({ name: 'audit-log.jsonl', records: audit.length });
  }, 60_000);

  it('is refused without a session (401) and to an admin (403: owners only)', async () => {
    const owner = await signUp(t.app, { workspaceName: 'Private' });
    expect((await archive({ cookie: '' })).statusCode).toBe(401);
    const viewer = await seedMember(t.app, t.databaseUrl, owner.workspaceId, 'admin');
    const refused = await archive(viewer);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ status: 403, code: 'insufficient_role' });
    const query = await t.app.inject({
      method: 'GET',
      url: '/api/console/workspace/archive?workspace=other',
      headers: { cookie: owner.cookie },
    });
    expect(query.statusCode).toBe(400);
  });
});
