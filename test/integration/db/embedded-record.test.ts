import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedRecordPath, readLiveRecord } from '../../../src/db/embedded-record.js';
import { portOrFree } from '../../../src/db/embedded.js';

/** A port something listens on for the whole file (stands in for a running PostgreSQL). */
let server: Server;
let busyPort = 0;
beforeAll(async () => {
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  busyPort = (server.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function dataDirWith(record: object | string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'embedded-record-'));
  writeFileSync(embeddedRecordPath(dir), typeof record === 'string' ? record : JSON.stringify(record));
  return dir;
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

describe('the embedded PostgreSQL record (DATA_DIR/postgres.json)', () => {
  it('is used when its process lives and its port answers', async () => {
    const record = {
      url: `postgres://postgres:postgres@127.0.0.1:${busyPort}/postgres`,
      port: busyPort,
      pid: process.pid,
      startedAt: '2026-11-24T00:00:00.000Z',
    };
    expect(await readLiveRecord(dataDirWith(record))).toEqual(record);
  });

  it('is ignored when its process is gone (a crash or kill -9 left it behind)', async () => {
    const dir = dataDirWith({
      url: 'postgres://x@127.0.0.1/p',
      port: busyPort,
      pid: deadPid(),
      startedAt: '',
    });
    expect(await readLiveRecord(dir)).toBeNull();
  });

  it('is ignored when nothing answers on its port', async () => {
    const closed = await portOrFree(0);
    const dir = dataDirWith({
      url: 'postgres://x@127.0.0.1/p',
      port: closed,
      pid: process.pid,
      startedAt: '',
    });
    expect(await readLiveRecord(dir)).toBeNull();
  });

  it('is ignored when missing, unreadable or of the wrong shape', async () => {
    expect(await readLiveRecord(mkdtempSync(path.join(tmpdir(), 'embedded-record-')))).toBeNull();
    expect(await readLiveRecord(dataDirWith('{not json'))).toBeNull();
    expect(await readLiveRecord(dataDirWith({ url: 1, port: busyPort, pid: process.pid }))).toBeNull();
  });
});

describe('portOrFree', () => {
  it('keeps a free port and picks another when it is taken', async () => {
    const free = await portOrFree(0);
    expect(await portOrFree(free)).toBe(free);
    const other = await portOrFree(busyPort);
    expect(other).not.toBe(busyPort);
    expect(other).toBeGreaterThan(0);
  });
});
