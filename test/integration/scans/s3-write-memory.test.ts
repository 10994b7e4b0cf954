import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/lib/config.js';
import { createS3Client } from '../../../src/app/object-storage.js';
import { createS3ScanStorage } from '../../../src/domain/scans/s3-scan-storage.js';
import { TEST_PEPPER } from '../../helpers/test-app.js';
import { testS3Env } from '../../helpers/db.js';

/*
 * What a long write into S3 holds in memory (docs/operations.md#memory-of-a-worker): its part
 * buffers, reused, and not a pile of dead per-part copies waiting for V8 to collect them.
 */

const s3Env = testS3Env('S3 write memory');
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

const MiB = 1024 * 1024;

describe('a long write into S3', () => {
  it.skipIf(s3Env === null)(
    'holds no more than its parts in flight and the one being filled, whatever its size',
    async () => {
      const config = loadConfig({ KEY_PEPPER: TEST_PEPPER, ...s3Env });
      const client = createS3Client(config.s3!);
      cleanups.push(async () => client.destroy());
      // 5 MiB parts, two in flight: 15 MiB of part buffers.
      const storage = createS3ScanStorage(
        client,
        { bucket: config.s3!.bucket, prefix: config.s3!.prefix },
        { partSize: 5 * MiB, queueSize: 2 },
      );
      const key = `${randomUUID()}/${randomUUID()}`;
      cleanups.push(() => storage.remove(key));
      // One source buffer, written in views of it: the source itself allocates nothing more.
      const source = Buffer.alloc(MiB, 7);
      const chunks = 120 * 16; // 120 MiB in 64 KiB chunks
      let peak = 0;
      const base = process.memoryUsage().arrayBuffers;
      async function* body(): AsyncGenerator<Buffer> {
        for (let i = 0; i < chunks; i++) {
          peak = Math.max(peak, process.memoryUsage().arrayBuffers - base);
          yield source.subarray((i % 16) * 64 * 1024, ((i % 16) + 1) * 64 * 1024);
        }
      }
      const write = await storage.create(key);
      await pipeline(Readable.from(body(), { objectMode: false }), write.stream);
      await write.commit();
      expect(await storage.size(key)).toBe(120 * MiB);
      // 15 MiB of parts and the stream's 1 MiB buffer; a copy per part left to the collector
      // would reach V8's 64 MiB external-memory threshold before anything is freed.
      expect(peak / MiB).toBeLessThan(24);
    },
    60_000,
  );
});
