import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { startEmbeddedPostgres } from './embedded.js';

/**
 * The record a process running the embedded PostgreSQL leaves in the data folder
 * (`DATA_DIR/postgres.json`), so that other processes on the same data (the admin CLI beside
 * `npm start`) connect to it instead of trying to start a second server on a locked folder.
 * Written once the server is up, removed when it is stopped; a record whose process is gone
 * (a crash, `kill -9`) or whose port does not answer is ignored.
 */
export interface EmbeddedRecord {
  url: string;
  port: number;
  /** The Node process that started the server and will stop it. */
  pid: number;
  startedAt: string;
}

/** The record's file in a data folder. */
export function embeddedRecordPath(dataDir: string): string {
  return path.join(dataDir, 'postgres.json');
}

/** The record of a server that runs now, or null (none, unreadable, its process gone, its port closed). */
export async function readLiveRecord(dataDir: string): Promise<EmbeddedRecord | null> {
  let record: EmbeddedRecord;
  try {
    record = JSON.parse(readFileSync(embeddedRecordPath(dataDir), 'utf8')) as EmbeddedRecord;
  } catch {
    return null;
  }
  if (typeof record.url !== 'string' || !Number.isInteger(record.pid) || !Number.isInteger(record.port))
    return null;
  if (!processAlive(record.pid)) return null;
  return (await portAnswers(record.port)) ? record : null;
}

export interface OpenedEmbedded {
  url: string;
  /** True when another process's server is used: `close` then leaves it running. */
  shared: boolean;
  close(): Promise<void>;
}

/**
 * The embedded database for a process. With `reuseRunning` (the admin CLI) a server another
 * process recorded is used as it is; otherwise, or when none runs, one is started in
 * `DATA_DIR/postgres` (on `port`, or a free one when it is taken), recorded, and on `close`
 * stopped and unrecorded.
 */
export async function openEmbeddedDatabase(
  dataDir: string,
  port: number,
  options: { reuseRunning?: boolean; log?: (line: string) => void } = {},
): Promise<OpenedEmbedded> {
  const running = await readLiveRecord(dataDir);
  if (running && options.reuseRunning) {
    return { url: running.url, shared: true, close: async () => undefined };
  }
  let db;
  try {
    db = await startEmbeddedPostgres(path.join(dataDir, 'postgres'), port, options.log);
  } catch (err) {
    if (!running) throw err;
    throw new Error(
      `the embedded PostgreSQL in ${dataDir} is already run by process ${running.pid} ` +
        `(on port ${running.port}, see ${embeddedRecordPath(dataDir)}): stop it, or use another DATA_DIR`,
      { cause: err },
    );
  }
  const record: EmbeddedRecord = {
    url: db.url,
    port: db.port,
    pid: process.pid,
    startedAt: new Date().toISOString(),
  };
  writeFileSync(embeddedRecordPath(dataDir), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  return {
    url: db.url,
    shared: false,
    async close() {
      removeOwnRecord(dataDir);
      await db.stop();
    },
  };
}

function removeOwnRecord(dataDir: string): void {
  try {
    const record = JSON.parse(readFileSync(embeddedRecordPath(dataDir), 'utf8')) as EmbeddedRecord;
    if (record.pid === process.pid) rmSync(embeddedRecordPath(dataDir), { force: true });
  } catch {
    // No record, or not ours to remove.
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
