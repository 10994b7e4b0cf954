import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/lib/config.js';
import { createLogger } from '../../../src/lib/logger.js';
import { openScanStorage, type OpenedStorage } from '../../../src/app/object-storage.js';
import type { ScanStorage, StoredEntry } from '../../../src/domain/scans/scan-storage.js';
import { sweepStorage } from '../../../src/domain/scans/storage-sweep.js';
import { TEST_PEPPER } from '../../helpers/test-app.js';
import { testS3Env } from '../../helpers/db.js';

/*
 * One contract, two drivers (docs/deploy.md#object-storage): the local disk of `npm start` and
 * S3-compatible object storage, here a real OpenStack Swift speaking the S3 API. A write is
 * invisible until committed, an aborted or dead write leaves nothing once swept, reads stream.
 */

const logger = createLogger('silent');
const s3Env = testS3Env('scan storage drivers');
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

async function open(driver: 'disk' | 's3', extra: Record<string, string> = {}): Promise<OpenedStorage> {
  const dir = await mkdtemp(path.join(tmpdir(), 'storage-'));
  const opened = await openScanStorage(
    loadConfig({
      KEY_PEPPER: TEST_PEPPER,
      SCAN_STORAGE_DIR: dir,
      ...(driver === 's3' ? s3Env : {}),
      ...extra,
    }),
    logger,
  );
  cleanups.push(async () => {
    opened.close();
    await rm(dir, { recursive: true, force: true });
  });
  return opened;
}

const keyOf = () => `${randomUUID()}/${randomUUID()}`;

async function readAll(storage: ScanStorage, key: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of storage.open(key)) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

async function listed(storage: ScanStorage): Promise<StoredEntry[]> {
  const out: StoredEntry[] = [];
  for await (const e of storage.entries()) out.push(e);
  return out;
}

/** Bytes that differ along the file, so a misplaced part would show. */
function pattern(size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i + 4 <= size; i += 4) b.writeUInt32LE(i, i);
  return b;
}

const drivers = [
  { name: 'disk' as const, skip: false },
  { name: 's3' as const, skip: s3Env === null },
];

describe.each(drivers)('scan storage on $name', ({ name, skip }) => {
  it.skipIf(skip)('stores a streamed file that reads back byte for byte once committed', async () => {
    const { storage } = await open(name);
    const key = keyOf();
    const body = pattern(19 * 1024 * 1024 + 123); // more than two multipart parts
    const write = await storage.create(key);
    await pipeline(Readable.from([body.subarray(0, 7_000_000), body.subarray(7_000_000)]), write.stream);
    await write.commit();
    expect(await storage.size(key)).toBe(body.length);
    expect((await readAll(storage, key)).equals(body)).toBe(true);
    const entry = (await listed(storage)).find((e) => e.key === key);
    expect(entry).toMatchObject({ key, ownerId: key.split('/')[1], partial: false });
    await storage.remove(key);
    expect(await storage.size(key)).toBeNull();
    await storage.remove(key); // a missing file is not an error
  });

  it.skipIf(skip)('leaves nothing behind when a write is aborted, small or large', async () => {
    const { storage } = await open(name);
    for (const size of [10, 12 * 1024 * 1024]) {
      const key = keyOf();
      const write = await storage.create(key);
      // A write still in flight when the stream is dropped fails; the writer hears it here.
      write.stream.on('error', () => undefined);
      write.stream.write(pattern(size));
      await new Promise((r) => setTimeout(r, 300));
      await write.abort();
      await write.abort(); // safe twice
      expect(await storage.size(key)).toBeNull();
      expect((await listed(storage)).filter((e) => e.key === key)).toEqual([]);
    }
  });

  it.skipIf(skip)('lists the write of a process that died as partial, and the sweep removes it', async () => {
    const { storage } = await open(name);
    const key = keyOf();
    const write = await storage.create(key);
    write.stream.on('error', () => undefined);
    // More than one part, then silence: the writer "died" without commit or abort.
    write.stream.write(pattern(9 * 1024 * 1024));
    const seen = async () => (await listed(storage)).filter((e) => e.key === key);
    for (let i = 0; i < 100 && (await seen()).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await seen()).toMatchObject([{ key, partial: true }]);
    const report = await sweepStorage(
      { storage, owned: async () => new Set() },
      new Date(Date.now() + 24 * 3600_000),
    );
    expect(report.partialsRemoved).toBeGreaterThanOrEqual(1);
    expect(await seen()).toEqual([]);
    write.stream.destroy();
  });

  it.skipIf(skip)('reports a missing file to a reader as ENOENT', async () => {
    const { storage } = await open(name);
    await expect(readAll(storage, keyOf())).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('scan storage on S3 when the server is down', () => {
  it.skipIf(s3Env === null)('answers 503 overloaded with Retry-After, and never hangs a writer', async () => {
    const { storage } = await open('s3');
    // The same storage, pointed at a port nothing listens on.
    const dead = await openScanStorage(
      loadConfig({ KEY_PEPPER: TEST_PEPPER, ...s3Env, S3_ENDPOINT: 'http://127.0.0.1:9' }),
      logger,
    ).catch((err: unknown) => err);
    // Start-up refuses an unreachable bucket with a message naming it and no secret.
    expect(String(dead)).toMatch(/S3 bucket "vt-tests" cannot be reached/);
    expect(String(dead)).not.toContain('testing');
    expect(storage).toBeDefined();

    const { createS3ScanStorage } = await import('../../../src/domain/scans/s3-scan-storage.js');
    const { createS3Client } = await import('../../../src/app/object-storage.js');
    const config = loadConfig({ KEY_PEPPER: TEST_PEPPER, ...s3Env, S3_ENDPOINT: 'http://127.0.0.1:9' });
    const client = createS3Client(config.s3!);
    cleanups.push(async () => client.destroy());
    const down = createS3ScanStorage(client, { bucket: config.s3!.bucket, prefix: config.s3!.prefix });
    // Whether the failure reaches the writer while it writes or at commit depends on buffering:
    // either way it is a 503, and nothing waits for ever.
    for (const parts of [1, 8]) {
      const write = await down.create(keyOf());
      const failure = await pipeline(
        Readable.from(Array.from({ length: parts }, () => pattern(6 * 1024 * 1024))),
        write.stream,
      )
        .then(() => write.commit())
        .then(
          () => null,
          (err: unknown) => err,
        );
      expect(failure).toMatchObject({ code: 'overloaded', status: 503 });
      await write.abort();
    }
    await expect(down.size(keyOf())).rejects.toMatchObject({
      code: 'overloaded',
      options: { headers: { 'Retry-After': '5' } },
    });
  });
});
