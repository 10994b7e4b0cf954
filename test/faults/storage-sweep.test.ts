import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PEPPER, signUp } from '../helpers/test-app.js';
import { signUpOverHttp, startServerProcess } from '../helpers/server-process.js';
import {
  eventually,
  openUpload,
  startScanApp,
  storedFiles,
  uploadScan,
  type ScanTestApp,
} from '../helpers/scan-app.js';
import { runMaintenance } from '../../src/domain/maintenance.js';
import { insertExport } from '../../src/domain/exports/export-store.js';

/*
 * docs/ingestion.md#upload-bounds: scan storage holds only files of live scans, live exports and uploads in
 * progress. The maintenance job removes `.part` files whose writer is gone (no write for longer
 * than any live upload allows, or begun longer ago than the longest upload) and committed files
 * no scan row owns. Exports render into the same storage under `<workspace>/<export id>`:
 * their rows own their files, whatever their status, and they are never swept.
 */

const nessus = readFileSync(path.resolve('test/fixtures/scans/nessus/nessus_v_unknown.xml'));
const MINUTE = 60_000;

describe('storage orphan sweep', () => {
  let t: ScanTestApp;

  beforeAll(async () => {
    t = await startScanApp({ worker: false });
  });
  afterAll(async () => t?.close());

  const sweep = (aheadMs: number) =>
    runMaintenance({
      db: t.infra.pool,
      quota: t.deps.quota,
      bus: t.infra.bus,
      clock: () => new Date(Date.now() + aheadMs),
      storage: { storage: t.storage },
    });

  const newExport = async (workspaceId: string, status: 'queued' | 'completed') => {
    const id = randomUUID();
    await insertExport(t.infra.pool, {
      id,
      workspaceId,
      keyId: null,
      subject: 'cases',
      format: 'csv',
      filter: {},
      expiresAt: new Date(Date.now() + 24 * 3600_000),
    });
    if (status === 'completed')
      await t.infra.pool.query(`UPDATE exports SET status = 'completed', storage_key = $2 WHERE id = $1`, [
        id,
        `${workspaceId}/${id}`,
      ]);
    return id;
  };

  const commitFile = async (key: string, body = 'x') => {
    const w = await t.storage.create(key);
    w.stream.end(body);
    await new Promise((r) => w.stream.once('finish', r));
    await w.commit();
  };

  it('removes dead .part files and ownerless files; keeps scans, exports and live uploads', async () => {
    const { key, workspaceId: ws } = await signUp(t.app);
    const dir = path.join(t.storageDir, ws);
    const res = await uploadScan(t.app, key, nessus);
    expect(res.statusCode).toBe(202);
    const scanId = (res.json() as { scanId: string }).scanId;

    const done = await newExport(ws, 'completed');
    await commitFile(`${ws}/${done}`);
    // Rendered and renamed, its row not yet marked completed (the moment between commit and
    // completeExport): owned by its row all the same.
    const rendering = await newExport(ws, 'queued');
    await commitFile(`${ws}/${rendering}`);
    // A long export still writing: begun two hours ago, written to just now.
    const longExport = await newExport(ws, 'queued');
    const longPart = `${longExport}.scan.4242.${(Date.now() - 120 * MINUTE).toString(36)}.part`;
    await writeFile(path.join(dir, longPart), 'rows');

    const orphan = randomUUID();
    await commitFile(`${ws}/${orphan}`);
    const freshOrphan = randomUUID();
    const deadPart = `${randomUUID()}.scan.4242.${(Date.now() - 5 * MINUTE).toString(36)}.part`;
    await writeFile(path.join(dir, deadPart), 'half');
    const oldStart = `${randomUUID()}.scan.4242.${(Date.now() - 120 * MINUTE).toString(36)}.part`;
    await writeFile(path.join(dir, oldStart), 'trickle');
    const live = await t.storage.create(`${ws}/${randomUUID()}`);
    live.stream.write('in progress');

    // Everything but the fresh orphan, the live upload and the writing parts was last written an hour ago.
    const hourAgo = new Date(Date.now() - 60 * MINUTE);
    for (const f of [`${scanId}.scan`, `${done}.scan`, `${rendering}.scan`, `${orphan}.scan`, deadPart])
      await utimes(path.join(dir, f), hourAgo, hourAgo);
    await commitFile(`${ws}/${freshOrphan}`);

    const report = await sweep(0);
    expect(report.storage).toEqual({ partialsRemoved: 2, orphansRemoved: 1 });
    const left = await storedFiles(t, ws);
    expect(left).toEqual(
      expect.arrayContaining([
        `${scanId}.scan`,
        `${done}.scan`,
        `${rendering}.scan`,
        `${freshOrphan}.scan`,
        longPart,
      ]),
    );
    expect(left).toHaveLength(6);
    expect(left.filter((f) => f.endsWith('.part'))).toHaveLength(2); // the long export's and the live upload's
    expect(left).not.toContain(`${orphan}.scan`);
    expect(left).not.toContain(deadPart);
    expect(left).not.toContain(oldStart);

    // Twenty minutes on, the fresh orphan is old enough; everything owned stays.
    await live.abort();
    const later = await sweep(20 * MINUTE);
    expect(later.storage.orphansRemoved).toBe(1);
    expect(await storedFiles(t, ws)).toEqual(
      expect.arrayContaining([`${scanId}.scan`, `${done}.scan`, `${rendering}.scan`]),
    );
  });

  it('removes the .part file of a web process killed mid-upload', { timeout: 60_000 }, async () => {
    const web = await startServerProcess('web', {
      DATABASE_URL: t.databaseUrl,
      KEY_PEPPER: TEST_PEPPER,
      SCAN_STORAGE_DIR: t.storageDir,
    });
    try {
      const user = await signUpOverHttp(web.url);
      const port = Number(new URL(web.url).port);
      const up = await openUpload(
        port,
        { 'x-api-key': user.key, 'content-type': 'application/xml' },
        10_000_000,
        nessus.subarray(0, 4096),
      );
      const hasPart = async () => (await storedFiles(t, user.workspaceId)).some((f) => f.endsWith('.part'));
      expect(await eventually(hasPart, 10_000)).toBe(true);
      await web.stop('SIGKILL');
      up.close();
      expect(await hasPart()).toBe(true);
      // Nothing writes to it any more: once the idle bound has passed, the sweep removes it.
      const report = await sweep(16 * MINUTE);
      expect(report.storage.partialsRemoved).toBe(1);
      expect(await hasPart()).toBe(false);
    } finally {
      await web.stop('SIGKILL');
    }
  });
});
