import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, type ScanTestApp } from '../../helpers/scan-app.js';
import {
  uploadScan,
  type UploadScanDeps,
  type UploadScanInput,
} from '../../../src/domain/scans/upload-scan.js';
import { createUploadGate } from '../../../src/domain/scans/upload-gate.js';
import { createLocalScanStorage, type ScanStorage } from '../../../src/domain/scans/scan-storage.js';
import { getScan } from '../../../src/domain/scans/scan-store.js';
import { AppError } from '../../../src/lib/errors.js';

/**
 * The upload use case called directly, as both upload routes call it: the gate, the free-space
 * check, acceptance and the enqueue, with no HTTP in between. (The app is started only for a
 * migrated database and a workspace.)
 */
const NESSUS = '<?xml version="1.0"?><NessusClientData_v2><Report name="r"></Report></NessusClientData_v2>';

let t: ScanTestApp;
let workspaceId: string;
let dir: string;

beforeAll(async () => {
  t = await startScanApp({ worker: false });
  ({ workspaceId } = await signUp(t.app));
  dir = await mkdtemp(path.join(tmpdir(), 'upload-scan-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function setup(options: { free?: number | null; perWorkspace?: number } = {}) {
  const enqueued: string[] = [];
  const local = createLocalScanStorage(dir);
  const storage: ScanStorage = { ...local, freeBytes: async () => options.free ?? null };
  const gate = createUploadGate({ perWorkspace: options.perWorkspace ?? 2, maxConcurrent: 10 });
  const deps: UploadScanDeps = {
    pool: t.infra.pool,
    storage,
    gate,
    limits: { ...t.deps.config.uploads, minFreeBytes: 1000 },
    enqueue: async ({ scanId }) => {
      enqueued.push(scanId);
    },
  };
  let opened = 0;
  const input = (body = NESSUS): UploadScanInput => ({
    workspaceId,
    keyId: null,
    declaredBytes: body.length,
    maxBytes: 1024 * 1024,
    format: null,
    name: 'direct',
    asset: { name: null, environment: null, criticality: null, internetExposed: null },
    idempotencyKey: null,
    triage: 'none',
    open: async () => {
      opened++;
      return { body: Readable.from([Buffer.from(body)]), gzip: false };
    },
  });
  return { deps, gate, enqueued, input, opened: () => opened };
}

describe('uploadScan', () => {
  it('stores the file, records the scan and enqueues its parse, then gives the place back', async () => {
    const s = setup();
    const { scan, replayed } = await uploadScan(s.deps, s.input());
    expect(replayed).toBe(false);
    expect(scan).toMatchObject({ workspaceId, status: 'queued', format: 'nessus', name: 'direct' });
    expect(s.enqueued).toEqual([scan.id]);
    expect(await getScan(t.infra.pool, workspaceId, scan.id)).toMatchObject({ id: scan.id });
    expect(s.gate.active).toBe(0);
  });

  it('refuses past the workspace share (429) before opening the body', async () => {
    const s = setup({ perWorkspace: 1 });
    const held = s.gate.enter(workspaceId);
    const err = await uploadScan(s.deps, s.input()).catch((e: unknown) => e);
    held();
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(s.opened()).toBe(0);
    expect(s.enqueued).toEqual([]);
  });

  it('refuses when the disk would fill past the reserve (503) before opening the body, and frees the place', async () => {
    const s = setup({ free: 1000 + NESSUS.length - 1 });
    const err = await uploadScan(s.deps, s.input()).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'overloaded', status: 503 });
    expect(s.opened()).toBe(0);
    expect(s.gate.active).toBe(0);
  });

  it('gives the place back and keeps no file when the body is refused', async () => {
    const s = setup();
    const before = await readdir(dir, { recursive: true });
    const err = await uploadScan(s.deps, s.input('not a scan at all')).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'unsupported_format' });
    expect(s.gate.active).toBe(0);
    expect(s.enqueued).toEqual([]);
    expect(await readdir(dir, { recursive: true })).toEqual(before);
  });
});
